"""The trajscope dashboard: a Streamlit multipage app over the warehouse's named views (read-only)."""
