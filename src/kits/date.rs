//! RFC 3339 timestamps, as the registries write them, to and from Unix seconds. Only what
//! the kits need: release dates and the dependency cutoff (`{{before}}`).

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

fn num(s: &str, what: &str, text: &str) -> Result<i64, String> {
    s.parse::<i64>()
        .map_err(|_| format!("{text:?} is not an RFC 3339 timestamp (bad {what})"))
}

/// Parses `2025-10-30T22:14:51.078517Z`, `2026-07-27T20:12:02.025000+00:00`,
/// `2026-10-23T18:11:38+02:00` or a bare date `2025-10-30` into Unix seconds.
pub fn parse(text: &str) -> Result<i64, String> {
    let t = text.trim();
    let (date, time) = match t.split_once(['T', 't', ' ']) {
        Some((d, rest)) => (d, Some(rest)),
        None => (t, None),
    };
    let mut parts = date.splitn(3, '-');
    let (y, m, d) = match (parts.next(), parts.next(), parts.next()) {
        (Some(y), Some(m), Some(d)) => (num(y, "year", t)?, num(m, "month", t)?, num(d, "day", t)?),
        _ => return Err(format!("{t:?} is not an RFC 3339 timestamp")),
    };
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return Err(format!(
            "{t:?} is not an RFC 3339 timestamp (date out of range)"
        ));
    }
    let mut secs = days_from_civil(y, m, d) * 86_400;
    if let Some(time) = time {
        // Split off the zone: `Z`, or `+HH:MM` / `-HH:MM` after the seconds.
        let (clock, offset) = if let Some(c) = time.strip_suffix(['Z', 'z']) {
            (c, 0)
        } else if let Some(i) = time.rfind(['+', '-']) {
            let (c, z) = time.split_at(i);
            let sign = if z.starts_with('-') { -1 } else { 1 };
            let (hh, mm) = z[1..].split_once(':').unwrap_or((&z[1..], "0"));
            (
                c,
                sign * (num(hh, "zone", t)? * 3600 + num(mm, "zone", t)? * 60),
            )
        } else {
            (time, 0)
        };
        let clock = clock.split('.').next().unwrap_or_default();
        let mut hms = clock.splitn(3, ':');
        let h = num(hms.next().unwrap_or("0"), "hour", t)?;
        let mi = num(hms.next().unwrap_or("0"), "minute", t)?;
        let s = num(hms.next().unwrap_or("0"), "second", t)?;
        secs += h * 3600 + mi * 60 + s - offset;
    }
    Ok(secs)
}

/// Formats Unix seconds as `YYYY-MM-DDTHH:MM:SSZ`, which npm `--before`, uv
/// `--exclude-newer` and every registry understand.
pub fn format(secs: i64) -> String {
    let (y, m, d) = civil_from_days(secs.div_euclid(86_400));
    let s = secs.rem_euclid(86_400);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        s / 3600,
        (s / 60) % 60,
        s % 60
    )
}

/// The current time in Unix seconds.
pub fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

/// The dependency cutoff for a release published at `date`: `margin_minutes` later, so
/// that every file of the release itself (wheel and sdist are uploaded minutes apart) is
/// inside it.
pub fn cutoff(date: &str, margin_minutes: u32) -> Result<String, String> {
    Ok(format(parse(date)? + i64::from(margin_minutes) * 60))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_normalises_zones() {
        assert_eq!(parse("1970-01-01T00:00:00Z").unwrap(), 0);
        assert_eq!(format(0), "1970-01-01T00:00:00Z");
        let a = parse("2026-07-27T20:12:02.025000+00:00").unwrap();
        assert_eq!(format(a), "2026-07-27T20:12:02Z");
        assert_eq!(
            parse("2026-10-23T20:11:38+02:00").unwrap(),
            parse("2026-10-23T18:11:38Z").unwrap()
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
    }
}
