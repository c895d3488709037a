//! The SVG timeline of one case (askama template `timeline.svg`): its stop ladder's steps,
//! the budget windows, when the server exited or that it was still running, and where the
//! runs of a repeated case ended. Pure over the case and its budgets.

use askama::Template;

use super::class;
use crate::model::{Budgets, JudgedCase, Stage};
use crate::render::present::{action_label, actual, ms, visible};

// Timeline geometry, in SVG user units.
const W: f64 = 760.0;
const H: f64 = 96.0;
const LEFT: f64 = 12.0;
const RIGHT: f64 = 110.0;
const BAND_TOP: f64 = 32.0;
const AXIS: f64 = 74.0;

/// Numbers in the SVG: one decimal.
struct N(f64);

impl std::fmt::Display for N {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:.1}", self.0)
    }
}

struct Rect {
    class: Option<&'static str>,
    x: N,
    y: N,
    w: N,
    h: N,
    fill: &'static str,
    opacity: Option<&'static str>,
}

struct Line {
    class: Option<&'static str>,
    x1: N,
    y1: N,
    x2: N,
    y2: N,
    stroke: &'static str,
    width: Option<&'static str>,
    dash: Option<&'static str>,
}

struct Text {
    x: N,
    y: N,
    size: u32,
    bold: bool,
    fill: &'static str,
    anchor: Option<&'static str>,
    text: String,
}

struct Circle {
    class: &'static str,
    cx: N,
    cy: N,
    r: N,
    fill: &'static str,
}

struct Polygon {
    class: &'static str,
    points: String,
    fill: &'static str,
}

#[derive(Template)]
#[template(path = "timeline.svg", config = "src/render/askama.toml")]
struct Timeline {
    w: N,
    h: N,
    summary: String,
    rects: Vec<Rect>,
    lines: Vec<Line>,
    polygons: Vec<Polygon>,
    circles: Vec<Circle>,
    texts: Vec<Text>,
}

impl Timeline {
    fn text(
        &mut self,
        x: f64,
        y: f64,
        size: u32,
        fill: &'static str,
        anchor: &'static str,
        text: String,
    ) {
        self.texts.push(Text {
            x: N(x),
            y: N(y),
            size,
            bold: false,
            fill,
            anchor: Some(anchor),
            text: visible(&text),
        });
    }

    fn line(
        &mut self,
        class: Option<&'static str>,
        (x1, y1, x2, y2): (f64, f64, f64, f64),
        stroke: &'static str,
    ) -> &mut Line {
        self.lines.push(Line {
            class,
            x1: N(x1),
            y1: N(y1),
            x2: N(x2),
            y2: N(y2),
            stroke,
            width: None,
            dash: None,
        });
        self.lines.last_mut().expect("just pushed")
    }
}

/// A round tick spacing giving at most about eight ticks over `span` ms.
pub(super) fn tick_step(span: f64) -> f64 {
    let mut unit = 1.0;
    loop {
        for m in [1.0, 2.0, 2.5, 5.0] {
            if span / (unit * m) <= 8.0 {
                return unit * m;
            }
        }
        unit *= 10.0;
    }
}

/// The horizontal scale: milliseconds from the trigger to x.
struct Scale {
    span: f64,
}

impl Scale {
    fn width() -> f64 {
        W - LEFT - RIGHT
    }

    fn x(&self, t: f64) -> f64 {
        LEFT + (t.max(0.0) / self.span).min(1.0) * Self::width()
    }
}

/// The SVG timeline of one case: x is milliseconds from the trigger (the first step).
pub fn timeline(r: &JudgedCase, budgets: &Budgets) -> String {
    let summary = visible(&format!("{} · {}: {}", r.server, r.scenario, actual(r)));
    let mut t = Timeline {
        w: N(W),
        h: N(H),
        summary,
        rects: Vec::new(),
        lines: Vec::new(),
        polygons: Vec::new(),
        circles: Vec::new(),
        texts: Vec::new(),
    };
    if r.steps.is_empty() {
        return no_ladder(t, r);
    }
    // Planned steps (from the ladder the report carries), matched to recorded ones by position.
    let planned: Vec<(f64, u64, String)> = r
        .ladder
        .iter()
        .flat_map(|l| &l.steps)
        .scan(0.0, |at, st| {
            let p = (*at, st.wait_ms, action_label(&st.action));
            *at += st.wait_ms as f64;
            Some(p)
        })
        .collect();
    let wait_of = |i: usize| planned.get(i).map_or(budgets.grace_ms, |p| p.1) as f64;
    let last = r.steps.len() - 1;
    let ladder_end = r.steps[last].at_ms + wait_of(last);
    let runs_max = r
        .repeat
        .iter()
        .flat_map(|x| &x.runs)
        .filter_map(|o| o.exit_ms)
        .fold(0.0_f64, f64::max);
    let span = [
        ladder_end,
        r.exit_ms.unwrap_or(0.0),
        runs_max,
        budgets.prompt_ms as f64,
    ]
    .into_iter()
    .fold(1.0_f64, f64::max);
    let s = Scale { span };
    windows(&mut t, r, &s, &wait_of, budgets.prompt_ms as f64);
    axis(&mut t, &s);
    steps(&mut t, r, &s, &planned);
    life(&mut t, r, &s);
    runs(&mut t, r, &s);
    t.render().expect("timelines render")
}

/// A case without steps: a blank band saying why there is no ladder to draw.
fn no_ladder(mut t: Timeline, r: &JudgedCase) -> String {
    t.rects.push(Rect {
        class: None,
        x: N(LEFT),
        y: N(BAND_TOP),
        w: N(Scale::width()),
        h: N(AXIS - BAND_TOP),
        fill: "#f6f8fa",
        opacity: None,
    });
    let why = match &r.error {
        Some(e) => format!("the case could not run ({})", e.kind),
        None => "no step was recorded".into(),
    };
    t.text(
        LEFT + 8.0,
        BAND_TOP + 19.0,
        12,
        "#57606a",
        "start",
        format!("no stop ladder: {why}"),
    );
    t.render().expect("timelines render")
}

/// Where each run of a repeated case ended, as dots in a row above the worst run's life
/// (coloured by stage; runs that never exited at the right edge), so exits that cluster at
/// a few moments show as clusters.
fn runs(t: &mut Timeline, r: &JudgedCase, s: &Scale) {
    let Some(rep) = &r.repeat else {
        return;
    };
    let y = BAND_TOP + 22.0;
    let mut dots: Vec<(f64, &'static str)> = rep
        .runs
        .iter()
        .map(|o| {
            let fill = match (o.error, o.stage) {
                (Some(_), _) => "#57606a",
                (None, Some(Stage::Eof)) => "#1a7f37",
                (None, Some(Stage::Sigkill | Stage::Survived)) => "#cf222e",
                _ => "#bf8700",
            };
            let cx = o.exit_ms.map_or(LEFT + Scale::width() + 6.0, |at| s.x(at));
            (cx, fill)
        })
        .collect();
    dots.sort_by(|a, b| a.0.total_cmp(&b.0));
    // Runs that ended within a few pixels of each other are one dot, sized and counted.
    let mut groups: Vec<(f64, &'static str, usize)> = Vec::new();
    for (x, fill) in dots {
        match groups.last_mut() {
            Some((gx, gfill, n)) if x - *gx < 5.0 && *gfill == fill => *n += 1,
            _ => groups.push((x, fill, 1)),
        }
    }
    for (x, fill, n) in groups {
        t.circles.push(Circle {
            class: "run",
            cx: N(x),
            cy: N(y),
            r: N(2.5 + (n as f64).sqrt()),
            fill,
        });
        if n > 1 {
            t.text(x, y - 7.0, 9, fill, "middle", format!("×{n}"));
        }
    }
    t.text(
        LEFT + Scale::width() + 14.0,
        y + 3.0,
        10,
        "#57606a",
        "start",
        format!("{} runs", rep.runs.len()),
    );
}

/// Each recorded step's wait (alternating grey), then the prompt budget.
fn windows(
    t: &mut Timeline,
    r: &JudgedCase,
    s: &Scale,
    wait_of: &dyn Fn(usize) -> f64,
    prompt: f64,
) {
    for (i, st) in r.steps.iter().enumerate() {
        let (a, b) = (s.x(st.at_ms), s.x(st.at_ms + wait_of(i)));
        t.rects.push(Rect {
            class: None,
            x: N(a),
            y: N(BAND_TOP),
            w: N((b - a).max(0.5)),
            h: N(AXIS - BAND_TOP),
            fill: if i % 2 == 0 { "#f6f8fa" } else { "#eaeef2" },
            opacity: None,
        });
    }
    t.rects.push(Rect {
        class: Some("budget"),
        x: N(LEFT),
        y: N(BAND_TOP),
        w: N(s.x(prompt) - LEFT),
        h: N(AXIS - BAND_TOP),
        fill: "#2da44e",
        opacity: Some(".15"),
    });
    let (px, anchor) = if s.x(prompt) - LEFT > 130.0 {
        (s.x(prompt) - 4.0, "end")
    } else {
        (s.x(prompt) + 4.0, "start")
    };
    t.text(
        px,
        BAND_TOP + 12.0,
        10,
        "#1a7f37",
        anchor,
        format!("prompt budget {}", ms(prompt)),
    );
}

/// The axis, with round ticks.
fn axis(t: &mut Timeline, s: &Scale) {
    t.line(None, (LEFT, AXIS, LEFT + Scale::width(), AXIS), "#8c959f");
    let step = tick_step(s.span);
    let ticks = (s.span / step + 1e-9).floor() as usize;
    for k in 0..=ticks {
        let at = k as f64 * step;
        let (text, anchor) = match k {
            0 => ("0 = trigger".to_string(), "start"),
            k if k == ticks => (format!("{at} ms"), "middle"),
            _ => (at.to_string(), "middle"),
        };
        t.line(None, (s.x(at), AXIS, s.x(at), AXIS + 4.0), "#8c959f");
        t.text(s.x(at), AXIS + 14.0, 9, "#57606a", anchor, text);
    }
}

/// Planned steps the server never needed, faint; then the recorded ones.
fn steps(t: &mut Timeline, r: &JudgedCase, s: &Scale, planned: &[(f64, u64, String)]) {
    let width = Scale::width();
    let label = |t: &mut Timeline, at: f64, row: usize, text: String, color: &'static str| {
        let (lx, anchor) = if s.x(at) > LEFT + width - 130.0 {
            (s.x(at) - 3.0, "end")
        } else {
            (s.x(at) + 3.0, "start")
        };
        t.text(
            lx,
            if row.is_multiple_of(2) { 12.0 } else { 25.0 },
            11,
            color,
            anchor,
            text,
        );
    };
    for (i, (at, _, name)) in planned.iter().enumerate().skip(r.steps.len()) {
        if *at <= s.span {
            t.line(Some("planned"), (s.x(*at), 18.0, s.x(*at), AXIS), "#8c959f")
                .dash = Some("3 3");
            label(t, *at, i, format!("({name} not needed)"), "#8c959f");
        }
    }
    for (i, st) in r.steps.iter().enumerate() {
        let top = if i % 2 == 0 { 4.0 } else { 17.0 };
        t.line(
            Some("step"),
            (s.x(st.at_ms), top, s.x(st.at_ms), AXIS),
            "#1f2328",
        )
        .width = Some("1.5");
        label(
            t,
            st.at_ms,
            i,
            format!("{} at {}", action_label(&st.action), ms(st.at_ms)),
            "#1f2328",
        );
    }
}

/// The server's life: to its exit, or on past the window with an arrow.
fn life(t: &mut Timeline, r: &JudgedCase, s: &Scale) {
    let color = match class(r.verdict()) {
        "ok" => "#1a7f37",
        "fail" => "#cf222e",
        _ => "#bf8700",
    };
    let y = AXIS - 6.0;
    let width = Scale::width();
    let (end, what, anchor) = match r.exit_ms {
        Some(ms_) => {
            let ex = s.x(ms_);
            t.circles.push(Circle {
                class: "exit",
                cx: N(ex),
                cy: N(y),
                r: N(5.0),
                fill: color,
            });
            let what = match r.exit_status {
                Some(st) => format!("exited at {} ({st})", ms(ms_)),
                None => format!("exited at {}", ms(ms_)),
            };
            if ex > LEFT + width - 200.0 {
                (ex, (ex - 8.0, what), "end")
            } else {
                (ex, (ex + 8.0, what), "start")
            }
        }
        None => {
            let end = LEFT + width + 40.0;
            t.polygons.push(Polygon {
                class: "running",
                points: format!(
                    "{},{} {},{} {},{}",
                    N(end),
                    N(y),
                    N(end - 9.0),
                    N(y - 5.0),
                    N(end - 9.0),
                    N(y + 5.0)
                ),
                fill: color,
            });
            (end - 8.0, (end, "still running".to_string()), "end")
        }
    };
    t.line(None, (LEFT, y, end, y), color).width = Some("3");
    t.texts.push(Text {
        x: N(what.0),
        y: N(y - 8.0),
        size: 11,
        bold: true,
        fill: color,
        anchor: Some(anchor),
        text: visible(&what.1),
    });
}
