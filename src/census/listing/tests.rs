//! Tests of reading listings: entries, argv, placeholders, skips with pointers and lines.

use super::*;

fn parse(text: &str) -> Listing {
    parse_listing(Path::new("l.json"), text).expect("a listing")
}

fn one(server: &str) -> Entry {
    let l = parse(server);
    assert!(l.skipped.is_empty(), "{:?}", l.skipped);
    assert_eq!(l.entries.len(), 1);
    l.entries.into_iter().next().unwrap()
}

fn skip_reason(server: &str) -> Skipped {
    let l = parse(server);
    assert!(l.entries.is_empty(), "{:?}", l.entries);
    assert_eq!(l.skipped.len(), 1, "{:?}", l.skipped);
    l.skipped.into_iter().next().unwrap()
}

const NPM: &str = r#"{"name":"io.github.user/weather","version":"1.0.0","description":"d",
  "packages":[{"registryType":"npm","identifier":"@example/server-weather","version":"1.0.0",
  "transport":{"type":"stdio"},"runtimeHint":"npx",
  "packageArguments":[{"type":"named","name":"--units","value":"metric"}],
  "environmentVariables":[{"name":"API_KEY","isSecret":true,"isRequired":true}]}]}"#;

#[test]
fn one_server_json_gives_an_npx_entry_with_a_placeholder_secret() {
    let e = one(NPM);
    assert_eq!(e.id, "example-server-weather-1.0.0");
    assert_eq!(e.server_name, "io.github.user/weather");
    assert_eq!(e.runtime, Launcher::Npx);
    assert_eq!(e.pointer, "/packages/0");
    assert_eq!(
        e.args,
        ["-y", "@example/server-weather@1.0.0", "--units", "metric"]
    );
    assert_eq!(e.env["API_KEY"], PLACEHOLDER);
    assert_eq!(e.placeholders, ["API_KEY"]);
}

#[test]
fn the_registry_response_and_a_bare_array_are_read_alike() {
    let response =
        format!(r#"{{"servers":[{{"server":{NPM},"_meta":{{}}}}],"metadata":{{"count":1}}}}"#);
    let l = parse(&response);
    assert_eq!(l.entries.len(), 1);
    assert_eq!(l.entries[0].pointer, "/servers/0/server/packages/0");
    let l = parse(&format!("[{NPM}, {NPM}]"));
    let ids: Vec<_> = l.entries.iter().map(|e| e.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "example-server-weather-1.0.0",
            "example-server-weather-1.0.0-2"
        ]
    );
    assert_eq!(l.entries[1].pointer, "/1/packages/0");
}

#[test]
fn whole_file_errors_name_file_line_and_column() {
    let err = parse_listing(Path::new("x/l.json"), "{\n  \"servers\": [,]\n}").unwrap_err();
    let msg = err.to_string();
    assert!(msg.starts_with("x/l.json:2:"), "{msg}");
    assert!(msg.contains("not valid JSON"), "{msg}");
    assert!(!msg.contains(" at line "), "{msg}");
    let err = parse_listing(Path::new("l.json"), "\n\n  {\"items\": []}").unwrap_err();
    assert_eq!(
        err,
        ListingError::Shape {
            path: "l.json".into(),
            line: 3,
            column: 3,
            problem: ShapeError::Unknown("an object with keys `items`".into())
        }
    );
    let err = parse_listing(Path::new("l.json"), r#"{"servers": 3}"#).unwrap_err();
    assert!(
        err.to_string().contains("`servers` must be an array"),
        "{err}"
    );
    assert!(parse_listing(Path::new("l.json"), "42").is_err());
}

#[test]
fn pypi_runs_with_uvx_and_pins_with_double_equals() {
    let e = one(
        r#"{"name":"io.github.x/time","version":"1","packages":[{"registryType":"pypi",
        "identifier":"mcp-server-time","version":"2026.10.19","transport":{"type":"stdio"},
        "runtimeArguments":[{"type":"named","name":"--python","value":"3.11"}],
        "packageArguments":[{"type":"named","name":"--local-timezone","default":"UTC"}]}]}"#,
    );
    assert_eq!(e.runtime, Launcher::Uvx);
    assert_eq!(e.runtime_args, ["--python", "3.11"]);
    assert_eq!(
        e.args,
        [
            "--python",
            "3.11",
            "mcp-server-time==2026.10.19",
            "--local-timezone",
            "UTC"
        ]
    );
    assert_eq!(e.description, "");
}

fn with_args(args: &str, env: &str) -> String {
    format!(
        r#"{{"name":"a.b/c","version":"1","packages":[{{"registryType":"npm","identifier":"p",
        "version":"1.2.3","transport":{{"type":"stdio"}},"packageArguments":{args},
        "environmentVariables":{env}}}]}}"#
    )
}

#[test]
fn arguments_are_argv_words_with_variables_substituted() {
    let e = one(&with_args(
        r#"[{"type":"positional","value":"{dir}","variables":{"dir":{"default":"/tmp"}}},
            {"type":"positional","valueHint":"stdio"},
            {"type":"named","name":"--stdio"},
            {"type":"named","name":"--token","value":"Bearer {t}",
             "variables":{"t":{"isSecret":true,"isRequired":true}}},
            {"type":"named","name":"--level=","value":"debug"},
            {"type":"named","name":"--offset","value":"-3"},
            {"type":"named","name":"--port","value":"{port}","variables":{"port":{}}},
            {"type":"named","name":"--key","isSecret":true},
            {"type":"positional","value":"; rm -rf ~ {\"a\":1}"}]"#,
        "[]",
    ));
    assert_eq!(
        e.args[2..],
        [
            "/tmp",
            "stdio",
            "--stdio",
            "--token",
            "Bearer mcp-shutdown-placeholder",
            "--level=debug",
            "--offset=-3",
            "; rm -rf ~ {\"a\":1}",
        ]
    );
    assert_eq!(e.placeholders, ["{t}"]);
}

#[test]
fn caller_variables_win_over_defaults_and_fill_value_hints() {
    let text = with_args(
        r#"[{"type":"positional","value":"{dir}","variables":{"dir":{"default":"/tmp"}}},
            {"type":"positional","valueHint":"target_dir","isRequired":true}]"#,
        r#"[{"name":"ROOT","value":"{dir}/x","variables":{"dir":{"default":"/tmp"}}}]"#,
    );
    let options = ParseOptions {
        variables: [
            ("dir".to_string(), "/scratch".to_string()),
            ("target_dir".to_string(), "/work".to_string()),
        ]
        .into(),
    };
    let l = parse_listing_with(Path::new("l.json"), &text, &options).unwrap();
    assert_eq!(l.entries[0].args[2..], ["/scratch", "/work"]);
    assert_eq!(l.entries[0].env["ROOT"], "/scratch/x");
}

#[test]
fn environment_defaults_secrets_and_missing_required_values() {
    let e = one(&with_args(
        "[]",
        r#"[{"name":"A","default":"1"},{"name":"B","isSecret":true,"isRequired":true},
            {"name":"C"},{"name":"D","isSecret":true},{"name":"E","value":"v"}]"#,
    ));
    assert_eq!(
        e.env,
        BTreeMap::from([
            ("A".into(), "1".into()),
            ("B".into(), PLACEHOLDER.into()),
            ("E".into(), "v".into())
        ])
    );
    let s = skip_reason(&with_args("[]", r#"[{"name":"HOST","isRequired":true}]"#));
    assert_eq!(s.pointer, "/packages/0/environmentVariables/0");
    assert!(s.reason.contains("`HOST` has no value or default"), "{s}");
}

#[test]
fn an_undefined_variable_is_skipped_with_its_pointer_and_line() {
    let s = skip_reason(&with_args(
        r#"[{"type":"positional","value":"{nope}"}]"#,
        "[]",
    ));
    assert_eq!(s.pointer, "/packages/0/packageArguments/0/value");
    assert_eq!(s.line, Some(2));
    assert_eq!(s.server_name.as_deref(), Some("a.b/c"));
    assert_eq!(
        s.to_string(),
        "entry 0 (a.b/c) at /packages/0/packageArguments/0/value (line 2): `{nope}` is \
         used in `value` but not defined in `variables`"
    );
}

#[test]
fn versions_must_be_exact() {
    for bad in [
        "latest", "^1.2.3", "~1.2", ">=1", "1.x", "1.*", "", "1.2 || 2",
    ] {
        let t = NPM.replace(
            r#""identifier":"@example/server-weather","version":"1.0.0""#,
            &format!(r#""identifier":"@example/server-weather","version":"{bad}""#),
        );
        let s = skip_reason(&t);
        assert!(s.reason.contains("not an exact version"), "{bad}: {s}");
    }
    for good in ["1.0.0", "2026.8.31", "0.0.1a8", "1.0.0-beta.2", "1!2.0"] {
        assert!(check_version("", good).is_ok(), "{good}");
    }
}

#[test]
fn identifiers_that_look_like_options_are_rejected() {
    for bad in ["--eval=x", "@scope", "a b", "-p"] {
        assert!(check_identifier("", Registry::Npm, bad).is_err(), "{bad}");
    }
    assert!(check_identifier("", Registry::Pypi, "-x").is_err());
    assert!(check_identifier("", Registry::Npm, "@a-b/c.d_e").is_ok());
    assert!(check_identifier("", Registry::Pypi, "awslabs.aws-documentation-mcp-server").is_ok());
}

#[test]
fn unrunnable_packages_are_reported_only_when_nothing_else_runs() {
    let both = r#"{"name":"a.b/c","version":"1","packages":[
        {"registryType":"oci","identifier":"docker.io/a/b","version":"1","transport":{"type":"stdio"}},
        {"registryType":"npm","identifier":"b","version":"1.0.0","transport":{"type":"stdio"}}]}"#;
    let l = parse(both);
    assert_eq!((l.entries.len(), l.skipped.len()), (1, 0));
    let only = r#"{"name":"a.b/c","version":"1","packages":[
        {"registryType":"oci","identifier":"docker.io/a/b","version":"1","transport":{"type":"stdio"}}]}"#;
    let s = skip_reason(only);
    assert!(s.not_runnable());
    assert_eq!(s.pointer, "/packages/0/registryType");
    assert_eq!(s.line, Some(2));
}

#[test]
fn id_is_a_valid_manifest_style_name() {
    assert_eq!(
        entry_id("@playwright/mcp", "0.0.83"),
        "playwright-mcp-0.0.83"
    );
    assert_eq!(entry_id("Office_Word", "1.1"), "office_word-1.1");
    assert_eq!(entry_id("@@", ""), "package");
}

#[test]
fn locate_walks_objects_arrays_and_escapes() {
    let text = "{\"a\": [1, {\"b/c\": \"x\\\"}\"}, [2]],\n \"d\": {}}";
    assert_eq!(&text[locate(text, "/a/1/b~1c")..][..1], "\"");
    assert_eq!(&text[locate(text, "/a/2/0")..][..1], "2");
    assert_eq!(&text[locate(text, "/d/missing")..][..2], "{}");
    assert_eq!(locate(text, "/a/9"), locate(text, "/a"));
    assert_eq!(line_column(text, locate(text, "/d")), (2, 7));
}

/// Every entry of the bundled malformed listing is rejected for its own reason, and the
/// two valid ones still run.
#[test]
fn the_bundled_malformed_listing() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("conformance/census/malformed.json");
    let text = std::fs::read_to_string(&path).unwrap();
    let l = parse_listing(&path, &text).unwrap();
    assert_eq!(l.entries.len(), 2, "{:?}", l.entries);
    let expected = [
        "missing `version`",
        "not runnable here: registryType `oci`",
        "not runnable here: registryType `nuget`",
        "not runnable here: registryType `mcpb`",
        "not runnable here: transport `streamable-http`",
        "required environment variable `DATABASE_HOST` has no value or default",
        "`version` must be a string, found a number",
        "unknown registryType `cargo`",
        "`{workspace}` is used in `value` but not defined in `variables`",
        "not runnable here: remote-only server",
        "not runnable here: runtimeHint `docker`",
        "`packageArguments` must be an array, found an object",
        "`name` \"not a reverse dns name\" is not a reverse-DNS server name",
    ];
    assert_eq!(l.skipped.len(), expected.len(), "{:#?}", l.skipped);
    for (s, want) in l.skipped.iter().zip(expected) {
        assert!(s.reason.contains(want), "{s} does not say {want:?}");
        assert!(s.line.is_some_and(|n| n > 1), "{s}");
        assert!(
            s.pointer.starts_with(&format!("/servers/{}/", s.index)),
            "{s}"
        );
    }
    let named = l.skipped.iter().filter(|s| s.server_name.is_some()).count();
    assert_eq!(named, expected.len());
}
