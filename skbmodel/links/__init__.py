"""The scenario's address: the URL codec, short links, versions of model and profiles, the page registry the
links name.
"""
