package main

// maskModule wires the mask module: its routes, consumer groups and
// background loops.
func (a *app) maskModule() (module, error) {
	return module{}, nil
}
