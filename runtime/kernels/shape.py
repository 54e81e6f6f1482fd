"""Kernels of the shape ops."""
