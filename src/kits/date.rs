//! Release dates as the registries write them (RFC 3339, or a bare date), read with `jiff`,
//! and the dependency cutoff (`{{before}}`) derived from them.

use jiff::{civil::Date, tz::TimeZone, SignedDuration, Timestamp};

/// A text that is not an RFC 3339 timestamp or a date.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{text:?} is not an RFC 3339 timestamp ({reason})")]
pub struct DateError {
    pub text: String,
    pub reason: String,
}

/// Parses `2025-10-30T22:14:51.078517Z`, `2026-07-27T20:12:02.025000+00:00`,
/// `2026-10-23T18:11:38+02:00` or a bare date `2025-10-30` (midnight UTC).
pub fn parse(text: &str) -> Result<Timestamp, DateError> {
    let t = text.trim();
    let err = |e: jiff::Error| DateError {
        text: t.to_string(),
        reason: e.to_string(),
    };
    if t.len() == 10 {
        let d: Date = t.parse().map_err(err)?;
        return d
            .to_zoned_datetime(TimeZone::UTC)
            .map(|z| z.timestamp())
            .map_err(err);
    }
    t.parse::<Timestamp>().map_err(err)
}

/// Formats a time as `YYYY-MM-DDTHH:MM:SSZ` (whole seconds), which npm `--before`, uv
/// `--exclude-newer` and every registry understand.
pub fn format(t: Timestamp) -> String {
    t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// The current time.
pub fn now() -> Timestamp {
    Timestamp::now()
}

/// `t` plus `minutes` (saturating at the end of jiff's range).
pub fn later(t: Timestamp, minutes: u32) -> Timestamp {
    t.saturating_add(SignedDuration::from_mins(i64::from(minutes)))
        .unwrap_or(t)
}

/// The dependency cutoff for a release published at `date`: `margin_minutes` later, so
/// that every file of the release itself (wheel and sdist are uploaded minutes apart) is
/// inside it.
pub fn cutoff(date: &str, margin_minutes: u32) -> Result<String, DateError> {
    Ok(format(later(parse(date)?, margin_minutes)))
}

/// `Tue, 01 Dec 2026 08:59:54 GMT` (an HTTP `Last-Modified`) → RFC 3339.
pub fn from_http(text: &str) -> Option<String> {
    jiff::fmt::rfc2822::parse(text)
        .ok()
        .map(|z| format(z.timestamp()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(text: &str) -> i64 {
        parse(text).unwrap().as_second()
    }

    #[test]
    fn round_trips_and_normalises_zones() {
        assert_eq!(secs("1970-01-01T00:00:00Z"), 0);
        assert_eq!(format(Timestamp::UNIX_EPOCH), "1970-01-01T00:00:00Z");
        let a = parse("2026-07-27T20:12:02.025000+00:00").unwrap();
        assert_eq!(format(a), "2026-07-27T20:12:02Z");
        assert_eq!(
            secs("2026-10-23T20:11:38+02:00"),
            secs("2026-10-23T18:11:38Z")
        );
        assert_eq!(format(parse("2024-02-29").unwrap()), "2024-02-29T00:00:00Z");
        assert_eq!(
            format(parse("2000-03-01T23:59:59Z").unwrap()),
            "2000-03-01T23:59:59Z"
        );
    }

    #[test]
    fn cutoff_adds_the_margin() {
        assert_eq!(
            cutoff("2025-10-30T22:14:51.078517Z", 60).unwrap(),
            "2025-10-30T23:14:51Z"
        );
        assert_eq!(
            cutoff("2025-12-31T23:30:00Z", 60).unwrap(),
            "2026-01-01T00:30:00Z"
        );
    }

    #[test]
    fn rejects_garbage() {
        assert!(parse("yesterday").is_err());
        assert!(parse("2025-13-01").is_err());
        assert!(parse("2025-01-01Tnoon").is_err());
        let e = cutoff("soon", 60).unwrap_err().to_string();
        assert!(
            e.starts_with("\"soon\" is not an RFC 3339 timestamp"),
            "{e}"
        );
    }

    #[test]
    fn http_dates() {
        assert_eq!(
            from_http("Tue, 01 Dec 2026 08:59:54 GMT").as_deref(),
            Some("2026-12-01T08:59:54Z")
        );
        assert_eq!(from_http("yesterday"), None);
    }
}
