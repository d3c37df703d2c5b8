package main

// sinkModule wires the sink module: its routes, consumer groups and
// background loops.
func (a *app) sinkModule() (module, error) {
	return module{}, nil
}
