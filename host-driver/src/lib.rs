//! `rnic-driver`: the verbs-style host driver.
