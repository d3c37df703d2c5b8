package main

// ledgerModule wires the ledger module: its routes, consumer groups and
// background loops.
func (a *app) ledgerModule() (module, error) {
	return module{}, nil
}
