"""The kernel's subsystems, one module each: what a packet's memory lifecycle costs, from a profile's constants
(arrays in, arrays out).
"""
