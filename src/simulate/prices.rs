//! Prices of the four billing classes, in US dollars per million tokens.
//!
//! The defaults are Anthropic's published list prices (platform.claude.com, "Pricing"),
//! picked by model id: cache writes cost 1.25× the input price with the 5-minute
//! time-to-live and 2× with the 1-hour one, cache reads 0.1×. Any price can be overridden
//! ([`PriceOverrides`]); an unknown model is priced as the current Opus.

use serde::{Deserialize, Serialize};

use crate::model::error::{Error, Result};
use crate::simulate::cache::Ttl;

/// Dollars per million tokens of each billing class.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Prices {
    /// Uncached input tokens.
    pub input: f64,
    /// Cache writes with the 5-minute time-to-live.
    pub cache_write_5m: f64,
    /// Cache writes with the 1-hour time-to-live.
    pub cache_write_1h: f64,
    /// Cache reads (hits and refreshes).
    pub cache_read: f64,
    /// Output tokens.
    pub output: f64,
}

/// Multiplier of the input price for a 5-minute cache write.
pub const WRITE_5M_FACTOR: f64 = 1.25;
/// Multiplier of the input price for a 1-hour cache write.
pub const WRITE_1H_FACTOR: f64 = 2.0;
/// Multiplier of the input price for a cache read.
pub const READ_FACTOR: f64 = 0.1;

impl Prices {
    /// Prices derived from an input and an output price with the documented cache factors.
    pub fn from_base(input: f64, output: f64) -> Prices {
        Prices {
            input,
            cache_write_5m: input * WRITE_5M_FACTOR,
            cache_write_1h: input * WRITE_1H_FACTOR,
            // Divided, not multiplied by 0.1, so $3 gives exactly $0.30.
            cache_read: input / (1.0 / READ_FACTOR),
            output,
        }
    }

    /// The list prices of `model` (a Claude model id; unknown ids: the current Opus).
    pub fn for_model(model: &str) -> Prices {
        let m = model.to_ascii_lowercase();
        let has = |s: &str| m.contains(s);
        let (input, output) = if has("haiku") {
            if has("3-5") || has("3.5") {
                (0.8, 4.0)
            } else if has("claude-3-haiku") {
                (0.25, 1.25)
            } else {
                (1.0, 5.0)
            }
        } else if has("sonnet") {
            (3.0, 15.0)
        } else if has("claude-3-opus")
            || has("opus-4-1")
            || has("opus-4-0")
            || m.ends_with("opus-4")
            || has("opus-4-2025")
        {
            (15.0, 75.0)
        } else {
            // Opus 4.5 and later, and anything unknown.
            (5.0, 25.0)
        };
        Prices::from_base(input, output)
    }

    /// Price of one cache write token class.
    pub fn write(&self, ttl: Ttl) -> f64 {
        match ttl {
            Ttl::FiveMinutes => self.cache_write_5m,
            Ttl::OneHour => self.cache_write_1h,
        }
    }

    /// Checks every price is a finite number ≥ 0.
    pub fn validate(&self) -> Result<()> {
        for (name, v) in self.named() {
            if !v.is_finite() || v < 0.0 {
                return Err(price_error(name, v));
            }
        }
        Ok(())
    }

    fn named(&self) -> [(&'static str, f64); 5] {
        [
            ("input", self.input),
            ("cacheWrite5m", self.cache_write_5m),
            ("cacheWrite1h", self.cache_write_1h),
            ("cacheRead", self.cache_read),
            ("output", self.output),
        ]
    }
}

/// The highest price a caller may give, dollars per million tokens: a dollar a token, far
/// above any model's, and low enough that a session's costs (tokens × price) stay finite.
pub const MAX_PRICE: f64 = 1e6;

fn price_error(name: &str, v: f64) -> Error {
    Error::invalid_argument(format!(
        "prices.{name} must be a finite number ≥ 0 (dollars per million tokens), got {}",
        crate::model::number::js_text(v)
    ))
}

/// A price the caller gave: finite, ≥ 0 and at most [`MAX_PRICE`].
fn check_given(name: &str, v: f64) -> Result<()> {
    if !v.is_finite() || v < 0.0 {
        return Err(price_error(name, v));
    }
    if v > MAX_PRICE {
        return Err(Error::invalid_argument(format!(
            "prices.{name} must be at most 1,000,000 dollars per million tokens (a dollar a token), got {}",
            crate::model::number::js_text(v)
        )));
    }
    Ok(())
}

/// Prices given by the caller: any field replaces the model's list price. An input price
/// given alone also moves the cache prices it derives (1.25×, 2×, 0.1×) unless those are
/// given too.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PriceOverrides {
    /// Uncached input, $/MTok.
    pub input: Option<f64>,
    /// 5-minute cache writes, $/MTok.
    pub cache_write_5m: Option<f64>,
    /// 1-hour cache writes, $/MTok.
    pub cache_write_1h: Option<f64>,
    /// Cache reads, $/MTok.
    pub cache_read: Option<f64>,
    /// Output, $/MTok.
    pub output: Option<f64>,
}

impl PriceOverrides {
    /// `base` with these overrides applied, validated: each price given is checked as given
    /// (finite, ≥ 0, at most [`MAX_PRICE`]), before any is derived from it.
    pub fn apply(&self, base: Prices) -> Result<Prices> {
        for (name, v) in [
            ("input", self.input),
            ("cacheWrite5m", self.cache_write_5m),
            ("cacheWrite1h", self.cache_write_1h),
            ("cacheRead", self.cache_read),
            ("output", self.output),
        ] {
            if let Some(v) = v {
                check_given(name, v)?;
            }
        }
        let derived = match self.input {
            Some(i) => Prices::from_base(i, base.output),
            None => base,
        };
        let p = Prices {
            input: derived.input,
            cache_write_5m: self.cache_write_5m.unwrap_or(derived.cache_write_5m),
            cache_write_1h: self.cache_write_1h.unwrap_or(derived.cache_write_1h),
            cache_read: self.cache_read.unwrap_or(derived.cache_read),
            output: self.output.unwrap_or(base.output),
        };
        p.validate()?;
        Ok(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_prices_follow_the_model_family() {
        let opus = Prices::for_model("claude-opus-4-6");
        assert_eq!((opus.input, opus.output), (5.0, 25.0));
        assert_eq!(opus.cache_write_5m, 6.25);
        assert_eq!(opus.cache_write_1h, 10.0);
        assert_eq!(opus.cache_read, 0.5);
        let sonnet = Prices::for_model("claude-sonnet-4-5-20250929");
        assert_eq!(
            (sonnet.input, sonnet.cache_write_5m, sonnet.cache_read),
            (3.0, 3.75, 0.3)
        );
        assert_eq!(Prices::for_model("claude-haiku-4-5").input, 1.0);
        assert_eq!(Prices::for_model("claude-opus-4-1-20250805").input, 15.0);
        assert_eq!(Prices::for_model("something-else").input, 5.0);
    }

    #[test]
    fn an_input_override_moves_the_derived_cache_prices_unless_they_are_given() {
        let base = Prices::for_model("claude-opus-4-6");
        let p = PriceOverrides {
            input: Some(2.0),
            cache_read: Some(0.1),
            ..Default::default()
        }
        .apply(base)
        .unwrap();
        assert_eq!(p.input, 2.0);
        assert_eq!(p.cache_write_5m, 2.5);
        assert_eq!(p.cache_write_1h, 4.0);
        assert_eq!(p.cache_read, 0.1);
        assert_eq!(p.output, 25.0);
    }

    /// A price so high that a session's cost is no finite number is refused naming the
    /// price given and the limit, not a price derived from it.
    #[test]
    fn prices_above_a_dollar_a_token_are_refused_naming_the_price_given() {
        let base = Prices::for_model("claude-opus-4-6");
        for (given, name) in [
            (
                PriceOverrides {
                    output: Some(1e308),
                    ..Default::default()
                },
                "output",
            ),
            (
                PriceOverrides {
                    input: Some(1e308),
                    ..Default::default()
                },
                "input",
            ),
            (
                PriceOverrides {
                    cache_read: Some(MAX_PRICE * 2.0),
                    ..Default::default()
                },
                "cacheRead",
            ),
        ] {
            let e = given.apply(base).unwrap_err();
            assert_eq!(e.code, crate::model::error::ErrorCode::InvalidArgument);
            assert!(
                e.message
                    .starts_with(&format!("prices.{name} must be at most 1,000,000")),
                "{e}"
            );
        }
        let e = PriceOverrides {
            input: Some(1e308),
            ..Default::default()
        }
        .apply(base)
        .unwrap_err();
        assert!(e.message.ends_with("got 1e+308"), "{e}");
        // The limit itself passes, its derived cache prices with it.
        let p = PriceOverrides {
            input: Some(MAX_PRICE),
            output: Some(MAX_PRICE),
            ..Default::default()
        }
        .apply(base)
        .unwrap();
        assert_eq!(p.cache_write_1h, 2.0 * MAX_PRICE);
    }

    #[test]
    fn negative_or_non_finite_prices_are_refused() {
        let base = Prices::for_model("claude-opus-4-6");
        for bad in [-1.0, f64::NAN, f64::INFINITY] {
            let e = PriceOverrides {
                output: Some(bad),
                ..Default::default()
            }
            .apply(base)
            .unwrap_err();
            assert!(e.to_string().contains("prices.output"), "{e}");
        }
    }
}
