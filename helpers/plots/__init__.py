"""Pure figure functions: parameters in, matplotlib Figure out. One module per topic."""
