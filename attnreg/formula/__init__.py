"""The formula family: the model frame (``design``), its input rules (``frame``), the
stateful transforms (``transforms``), the time operators (``lags``) and pickling (``spec``).
"""
