//! Every seed example, exercised.
