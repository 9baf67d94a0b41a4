"""The Streamlit dashboard (`app/main.py`); every number it shows comes from a warehouse view."""
