"""The Streamlit layer: the only part of skbview that imports Streamlit, and the owner of every
session-state key (the scenario store, the custom profile, the Calibrate page's input and fit, the
download cache).  The rest of skbview (charts, report, exporter) builds figures and files without it.
"""
