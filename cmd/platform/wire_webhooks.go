package main

// webhooksModule wires the webhooks module: its routes, consumer groups and
// background loops.
func (a *app) webhooksModule() (module, error) {
	return module{}, nil
}
