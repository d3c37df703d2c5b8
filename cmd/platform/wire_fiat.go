package main

// fiatModule wires the fiat module: its routes, consumer groups and
// background loops.
func (a *app) fiatModule() (module, error) {
	return module{}, nil
}
