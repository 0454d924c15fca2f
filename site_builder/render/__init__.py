"""From facts to site files: page templates (Jinja), math (MathML), diagrams (Graphviz SVG), source excerpts.

The MkDocs plugin (:mod:`site_builder.plugin`) drives these; nothing here
knows MkDocs.
"""
