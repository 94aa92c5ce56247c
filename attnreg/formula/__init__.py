"""The formula family: the model frame (``design``, built by ``builder``), the formula as text
(``parse``), input rules (``frame``), transforms, time operators (``lags``), pickling (``spec``).
"""
