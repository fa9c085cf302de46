"""Kueue objects in pure Python: schemas, quantities, conversion and validation.

Nothing here imports Pulumi; the program, the CLI and the policy pack share it.
"""
