"""The teaching texts' names, one module per text, over chainrule's own engine.

Each text that builds an autograd engine from scratch names and configures it its own way (a
ReLU or a tanh `Neuron`, `_children` or `_parents`, its own printed format). A reader of a
text imports that text's module and runs the text's programs as written:

=========================================  ==================================
text                                       module
=========================================  ==================================
Case Study 2 (autodiff engine from scratch) `chainrule.texts.case_study`
Section 2.6 (autograd from scratch)        `chainrule.texts.section_2_6`
BareBonesML (autograd engine)              `chainrule.texts.barebones`
Chapter 28 (automatic differentiation)     `chainrule.texts.chapter_28`
the autograd project page                  `chainrule.texts.project_page`
=========================================  ==================================

Every object these modules make is a chainrule object: one graph, one backward pass, one
rule table. Nothing here is imported by ``import chainrule``.
"""
