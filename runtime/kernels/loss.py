"""Kernels of the loss ops."""
