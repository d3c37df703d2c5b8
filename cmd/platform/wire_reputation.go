package main

// reputationModule wires the reputation module: its routes, consumer groups and
// background loops.
func (a *app) reputationModule() (module, error) {
	return module{}, nil
}
