"""The machine a scenario runs on: CPU profiles (shipped, derived, custom), their kernel configuration and era,
and the micro-architectures the derivation reads.
"""
