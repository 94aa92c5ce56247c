"""The views family: what a fit says beyond its coefficients.

``attention`` (each prediction as a weighted vote of the training rows), ``dual`` (the
embedding of a linear fit), ``estimability`` (whether a new row's prediction is estimable),
``linear`` (prediction with intervals and the attention view of a linear fit) and
``eventstudy`` (the coefficients of an event study).
"""
