"""The live web page of ``chainrule serve``: a graph with its gradients, an expression box and
a training playground. `server` handles HTTP; `expression`, `graph` and `playground` do the work.
"""
