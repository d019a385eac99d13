"""What the model is checked against: the seed and public measurements, their parsers, the fit, and the
validation protocols (in-sample and out-of-sample).
"""
