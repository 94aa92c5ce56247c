"""Reproduction of the paper's benchmarks: Monte Carlo DGPs and their driver."""
