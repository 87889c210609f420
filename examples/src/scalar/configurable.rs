//! `ConfigurableFunction` from the API digest: a parameterized instance.

use udf_core::prelude::*;

/// Prepends `prefix_` (the prefix is fixed when the instance is created).
#[derive(Clone, Debug)]
pub struct ConfigurableFunction {
    pub prefix: String,
}

#[scalar_function]
impl ConfigurableFunction {
    fn eval(&self, input: &str, out: &mut String) {
        out.push_str(&self.prefix);
        out.push('_');
        out.push_str(input);
    }
}
