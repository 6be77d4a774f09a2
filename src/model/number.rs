//! Reading decimal numbers without `str::parse::<f64>`.
//!
//! The standard float parser brings a 10 KB table of powers of five and 4 KB of code into the
//! WebAssembly module (docs/size.md), for the few decimal texts the core reads itself
//! (environment variables, the fraction of a timestamp). The reader here gives the same,
//! correctly rounded value whenever the digits fit in 15 significant digits and the power of
//! ten is at most 22 — every number those texts hold in practice — and a value within a few
//! units in the last place otherwise.

/// `10^k` for `k` in `0..=22`: each is exactly representable, so the products are exact.
fn pow10(k: u32) -> f64 {
    let mut p = 1.0;
    for _ in 0..k {
        p *= 10.0;
    }
    p
}

/// `mantissa × 10^exp10`, correctly rounded when `mantissa < 2^53` and `|exp10| <= 22`.
fn scale(mantissa: u64, exp10: i64) -> f64 {
    let m = mantissa as f64;
    if mantissa == 0 {
        return 0.0;
    }
    if (0..=22).contains(&exp10) {
        return m * pow10(exp10 as u32);
    }
    if (-22..0).contains(&exp10) {
        return m / pow10((-exp10) as u32);
    }
    // Outside the exact range: approximate, in steps that neither overflow nor underflow early.
    let mut v = m;
    let mut e = exp10.clamp(-800, 800);
    while e > 22 {
        v *= 1e22;
        e -= 22;
    }
    while e < -22 {
        v /= 1e22;
        e += 22;
    }
    scale_f(v, e)
}

fn scale_f(v: f64, e: i64) -> f64 {
    if e >= 0 {
        v * pow10(e as u32)
    } else {
        v / pow10((-e) as u32)
    }
}

/// Reads a decimal number as `str::parse::<f64>` accepts it: an optional sign, digits with an
/// optional `.` fraction (`5.`, `.5`), an optional exponent (`e`/`E`, signed), or `inf`,
/// `infinity`, `nan` in any case. Anything else (spaces, `_`, hex) is `None`.
pub fn parse_f64(s: &str) -> Option<f64> {
    let b = s.as_bytes();
    let (negative, rest) = match b.first() {
        Some(b'-') => (true, &b[1..]),
        Some(b'+') => (false, &b[1..]),
        _ => (false, b),
    };
    let signed = |v: f64| if negative { -v } else { v };
    if rest.eq_ignore_ascii_case(b"inf") || rest.eq_ignore_ascii_case(b"infinity") {
        return Some(signed(f64::INFINITY));
    }
    if rest.eq_ignore_ascii_case(b"nan") {
        return Some(f64::NAN);
    }
    let mut mantissa: u64 = 0;
    let mut significant = 0u32;
    let mut exp10: i64 = 0;
    let mut digits = 0usize;
    let mut i = 0;
    let mut in_fraction = false;
    while i < rest.len() {
        let c = rest[i];
        if c.is_ascii_digit() {
            digits += 1;
            let d = u64::from(c - b'0');
            if significant < 19 {
                if mantissa != 0 || d != 0 {
                    significant += 1;
                }
                mantissa = mantissa * 10 + d;
                if in_fraction {
                    exp10 -= 1;
                }
            } else if !in_fraction {
                // A digit past what the mantissa holds: it only scales the value.
                exp10 += 1;
            }
        } else if c == b'.' && !in_fraction {
            in_fraction = true;
        } else {
            break;
        }
        i += 1;
    }
    if digits == 0 {
        return None;
    }
    if i < rest.len() {
        if !matches!(rest[i], b'e' | b'E') {
            return None;
        }
        i += 1;
        let exp_negative = match rest.get(i) {
            Some(b'-') => {
                i += 1;
                true
            }
            Some(b'+') => {
                i += 1;
                false
            }
            _ => false,
        };
        let start = i;
        let mut e: i64 = 0;
        while i < rest.len() && rest[i].is_ascii_digit() {
            e = (e * 10 + i64::from(rest[i] - b'0')).min(1_000_000);
            i += 1;
        }
        if i == start || i < rest.len() {
            return None;
        }
        exp10 += if exp_negative { -e } else { e };
    }
    Some(signed(scale(mantissa, exp10)))
}

/// The value of `0.<digits>` for ASCII digits (`b"906"` → 0.906), correctly rounded for up to
/// 15 digits; further digits (below 10^-15) are ignored. No digits is 0.
pub fn fraction(digits: &[u8]) -> f64 {
    let kept = &digits[..digits.len().min(15)];
    let mantissa = kept
        .iter()
        .fold(0u64, |m, d| m * 10 + u64::from(d.wrapping_sub(b'0') % 10));
    scale(mantissa, -(kept.len() as i64))
}

// The counting module (the Cargo feature `count` alone) has no float printing of its own: the
// standard library's (`<f64 as Display>` and its Grisu and Dragon tables, about 19 KB raw,
// 6 KB gzip) is kept out, and the shortest digits of a number come from the JS engine's
// `String(n)`, which the bindings install at start ([`use_engine_text`]). Both give the
// shortest digits that read back as the number; the texts below are the same either way. The
// other modules keep the standard library's: serde's own messages print floats with it.
#[cfg(all(
    target_arch = "wasm32",
    feature = "count",
    not(feature = "base"),
    not(feature = "extra")
))]
mod engine {
    /// How the engine writes a number: `String(n)`.
    type NumberText = fn(f64) -> String;

    thread_local! {
        static TEXT: std::cell::Cell<Option<NumberText>> = const { std::cell::Cell::new(None) };
    }

    /// Gives the counting module the JS engine's `String(n)` (the bindings' start function).
    pub fn use_engine_text(text: NumberText) {
        TEXT.with(|t| t.set(Some(text)));
    }

    /// `String(n)` of a finite, non-zero `n`, from the engine.
    pub fn text(n: f64) -> String {
        TEXT.with(|t| t.get())
            .expect("number text installed at start")(n)
    }

    /// [`super::Plain`]'s text: the engine's digits, spelt out as `{}` writes them.
    pub fn plain(n: f64, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if n.is_nan() || n.is_infinite() || n == 0.0 {
            let text = if n.is_nan() {
                "NaN"
            } else if n.is_infinite() {
                if n > 0.0 {
                    "inf"
                } else {
                    "-inf"
                }
            } else if n.is_sign_negative() {
                "-0"
            } else {
                "0"
            };
            return f.write_str(text);
        }
        f.write_str(&super::spelt_out(&text(n)))
    }
}

#[cfg(all(
    target_arch = "wasm32",
    feature = "count",
    not(feature = "base"),
    not(feature = "extra")
))]
pub use engine::use_engine_text;

/// A number as Rust's `{}` writes an `f64` (`1.5`, `-5`, `-0`, `1000000000000000000000`,
/// `0.0000001`, `inf`, `NaN`), for messages that write a number so: `format!("{}",
/// Plain(n))` instead of `format!("{n}")`, which would bring the float printing into the
/// counting module.
#[derive(Clone, Copy)]
pub struct Plain(pub f64);

impl std::fmt::Display for Plain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        #[cfg(all(
            target_arch = "wasm32",
            feature = "count",
            not(feature = "base"),
            not(feature = "extra")
        ))]
        return engine::plain(self.0, f);
        #[allow(unreachable_code)]
        std::fmt::Display::fmt(&self.0, f)
    }
}

/// Rust's `{}` text of a finite, non-zero number from its JavaScript text (`String(n)`): the
/// same digits, but from 1e21 up and below 1e-6, which JavaScript writes in exponent form
/// (`-1.5e+21`, `1.25e-7`), spelt out (`-1500000000000000000000`, `0.000000125`).
#[cfg(any(
    test,
    all(
        target_arch = "wasm32",
        feature = "count",
        not(feature = "base"),
        not(feature = "extra")
    )
))]
fn spelt_out(js: &str) -> String {
    let Some(e) = js.find('e') else {
        return js.to_string();
    };
    let (mantissa, exp) = (&js[..e], &js[e + 1..]);
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let power = exp
        .bytes()
        .filter(u8::is_ascii_digit)
        .fold(0usize, |p, d| p * 10 + usize::from(d - b'0'));
    let mut out = String::with_capacity(digits.len() + power + 3);
    if mantissa.starts_with('-') {
        out.push('-');
    }
    if exp.starts_with('-') {
        out.push_str("0.");
        for _ in 1..power {
            out.push('0');
        }
        out.push_str(&digits);
    } else {
        out.push_str(&digits);
        for _ in digits.len()..=power {
            out.push('0');
        }
    }
    out
}

/// A number as JavaScript writes it (`String(n)`) in an error message: `NaN`, `Infinity`,
/// `0.5`, and from 1e21 up (or below 1e-6) in exponent form, `1e+300`, `5e-324`, not spelt
/// out in hundreds of digits.
pub fn js_text(n: f64) -> String {
    #[cfg(all(
        target_arch = "wasm32",
        feature = "count",
        not(feature = "base"),
        not(feature = "extra")
    ))]
    if n.is_finite() && n != 0.0 {
        return engine::text(n);
    }
    if n.is_nan() {
        return "NaN".into();
    }
    if n.is_infinite() {
        return if n > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    let plain = Plain(n).to_string();
    let a = n.abs();
    if !(a >= 1e21 || (a != 0.0 && a < 1e-6)) {
        return plain;
    }
    // Exponent form from the plain text's digits (`{}` writes the shortest digits that read
    // back as `n`, padded with zeros: `1500…0` or `0.000000125`), byte by byte, without the
    // exponent formatter's or the string searchers' code.
    let body = &plain.as_bytes()[usize::from(n < 0.0)..];
    let (digits, exp) = if a >= 1e21 {
        let end = body.len() - body.iter().rev().take_while(|&&b| b == b'0').count();
        (&body[..end.max(1)], body.len() as i64 - 1)
    } else {
        let frac = body.get(2..).unwrap_or_default();
        let lead = frac.iter().take_while(|&&b| b == b'0').count();
        (&frac[lead..], -(lead as i64) - 1)
    };
    let mut out = String::with_capacity(digits.len() + 8);
    if n < 0.0 {
        out.push('-');
    }
    for (k, &d) in digits.iter().enumerate() {
        if k == 1 {
            out.push('.');
        }
        out.push(char::from(d));
    }
    out.push('e');
    if exp >= 0 {
        out.push('+');
    }
    out.push_str(&exp.to_string());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_written_as_javascript_writes_them() {
        for (n, text) in [
            (1e300, "1e+300"),
            (-1.5e21, "-1.5e+21"),
            (1e21, "1e+21"),
            (1e20, "100000000000000000000"),
            (1e13, "10000000000000"),
            (5e-324, "5e-324"),
            (1.25e-7, "1.25e-7"),
            (0.000001, "0.000001"),
            (0.5, "0.5"),
            (-5.0, "-5"),
            (f64::NAN, "NaN"),
            (f64::NEG_INFINITY, "-Infinity"),
            (f64::MAX, "1.7976931348623157e+308"),
        ] {
            assert_eq!(js_text(n), text);
        }
    }

    /// The counting module's `{}` of a number (its JavaScript text spelt out, [`Plain`]) is
    /// the standard library's, across the whole range and at the boundaries of the exponent
    /// form.
    #[test]
    fn the_engine_digits_spelt_out_are_the_standard_text() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut values = vec![
            1e21,
            1e20,
            1e-6,
            1e-7,
            f64::from_bits(1e-6f64.to_bits() - 1),
            f64::from_bits(1e21f64.to_bits() - 1),
            1.5e300,
            5e-324,
            f64::MAX,
            0.1 + 0.2,
            0.25,
            100.0,
            4096.0,
            123_456.789,
        ];
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let v = f64::from_bits(x);
            if v.is_finite() && v != 0.0 {
                values.push(v);
            }
        }
        for v in values {
            for n in [v, -v] {
                assert_eq!(spelt_out(&js_text(n)), format!("{n}"), "{}", js_text(n));
                assert_eq!(Plain(n).to_string(), format!("{n}"));
            }
        }
        for n in [0.0, -0.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            assert_eq!(Plain(n).to_string(), format!("{n}"));
        }
    }

    /// The exponent form agrees with the standard exponent formatter's digits on values
    /// across the whole range (both signs, both ends, the boundaries 1e21 and 1e-6).
    #[test]
    fn the_exponent_form_has_the_formatter_digits() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut values = vec![
            1e21,
            1e-7,
            f64::from_bits(1e-6f64.to_bits() - 1),
            2.5e21,
            1e308,
            4e-320,
        ];
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let v = f64::from_bits(x);
            if v.is_finite() {
                values.push(v);
            }
        }
        for v in values {
            for n in [v, -v] {
                let a = n.abs();
                if !(a >= 1e21 || (a != 0.0 && a < 1e-6)) {
                    continue;
                }
                let e = format!("{n:e}");
                let i = e.find('e').unwrap();
                let want = if e[i + 1..].starts_with('-') {
                    e.clone()
                } else {
                    format!("{}e+{}", &e[..i], &e[i + 1..])
                };
                assert_eq!(js_text(n), want, "{e}");
            }
        }
    }

    fn same(a: Option<f64>, b: Option<f64>) -> bool {
        match (a, b) {
            (Some(x), Some(y)) => x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()),
            (None, None) => true,
            _ => false,
        }
    }

    #[test]
    fn reads_what_the_standard_parser_reads_with_the_same_value() {
        for s in [
            "0",
            "-0",
            "+80",
            "80",
            "92.5",
            "0.5",
            ".5",
            "5.",
            "1e5",
            "1E-3",
            "2.5e+2",
            "200000",
            "1000000",
            "0.1",
            "0.3",
            "99.99",
            "100",
            "1",
            "0.000001",
            "123456789012345",
            "3.141592653589793",
            "1e22",
            "1e-22",
            "inf",
            "-Infinity",
            "NaN",
            "007",
            "0.0",
        ] {
            assert!(
                same(parse_f64(s), s.parse::<f64>().ok()),
                "{s}: {:?} vs {:?}",
                parse_f64(s),
                s.parse::<f64>().ok()
            );
        }
    }

    #[test]
    fn refuses_what_the_standard_parser_refuses() {
        for s in [
            "", "-", "+", ".", "e5", "1e", "1e+", "1.2.3", "1_000", " 1", "1 ", "0x10", "abc",
            "--1", "1e5x", "in",
        ] {
            assert_eq!(parse_f64(s), None, "{s}");
            assert!(s.parse::<f64>().is_err(), "{s}");
        }
    }

    #[test]
    fn long_and_extreme_numbers_stay_close() {
        for s in [
            "12345678901234567890123",
            "0.12345678901234567890",
            "1e300",
            "1e-300",
            "1e400",
            "123.456e-30",
        ] {
            let (ours, std) = (parse_f64(s).unwrap(), s.parse::<f64>().unwrap());
            let close = if std.is_infinite() || std == 0.0 {
                ours == std
            } else {
                ((ours - std) / std).abs() < 1e-14
            };
            assert!(close, "{s}: {ours} vs {std}");
        }
    }

    #[test]
    fn fractions_match_the_parsed_decimal() {
        for d in [
            "",
            "9",
            "906",
            "5",
            "123",
            "999",
            "000001",
            "123456789012345",
        ] {
            let parsed: f64 = format!("0.{d}").parse().unwrap();
            assert_eq!(fraction(d.as_bytes()).to_bits(), parsed.to_bits(), "{d}");
        }
        let long = fraction(b"12345678901234567890");
        assert!((long - 0.123_456_789_012_345_67).abs() < 1e-15);
    }
}
