//! Async scalar and async table functions from the "User-defined Functions" guide.

pub mod async_background;
pub mod beverage_name_lookup;
