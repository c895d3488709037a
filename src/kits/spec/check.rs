//! Checking a read kit file section by section and converting it, with errors that name
//! the file, line, column and field.

use super::*;

// ---- validation -------------------------------------------------------------------------

/// Line and column (1-based) of a byte offset.
pub(super) fn position(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
    (line, col)
}

pub(super) struct Ctx<'a> {
    pub(super) path: &'a Path,
    pub(super) text: &'a str,
}

impl Ctx<'_> {
    pub(super) fn err(&self, span: Option<Range<usize>>, problem: SpecProblem) -> KitError {
        let (line, column) = match span {
            Some(s) => {
                let (l, c) = position(self.text, s.start);
                (Some(l), Some(c))
            }
            None => (None, None),
        };
        KitError::Parse {
            path: self.path.to_path_buf(),
            line,
            column,
            problem: Box::new(problem),
        }
    }

    pub(super) fn req(&self, field: &str, s: &Spanned<String>) -> Result<VersionReq, KitError> {
        VersionReq::parse(s.get_ref())
            .map_err(|e| self.err(Some(s.span()), field_err(field, FieldProblem::Version(e))))
    }

    /// Every `{{name}}` in `text` must be a built-in or a declared variable.
    pub(super) fn names_known(
        &self,
        field: &str,
        span: Range<usize>,
        text: &str,
        known: &BTreeSet<String>,
    ) -> Result<(), KitError> {
        let names = template::placeholders(text).map_err(|e| {
            self.err(
                Some(span.clone()),
                field_err(field, FieldProblem::Template(e)),
            )
        })?;
        for n in names {
            if !template::is_builtin(&n) && !known.contains(&n) {
                return Err(self.err(
                    Some(span),
                    field_err(field, FieldProblem::UnknownPlaceholder(n)),
                ));
            }
        }
        Ok(())
    }

    pub(super) fn steps_known(
        &self,
        field: &str,
        steps: &Option<Spanned<Vec<CommandTemplate>>>,
        known: &BTreeSet<String>,
    ) -> Result<Vec<CommandTemplate>, KitError> {
        let Some(steps) = steps else {
            return Ok(Vec::new());
        };
        for (i, step) in steps.get_ref().iter().enumerate() {
            if step.is_empty() {
                return Err(self.err(
                    Some(steps.span()),
                    field_err(format!("{field}[{i}]"), FieldProblem::NoProgram),
                ));
            }
            for a in step {
                self.names_known(&format!("{field}[{i}]"), steps.span(), a, known)?;
            }
        }
        Ok(steps.get_ref().clone())
    }

    pub(super) fn files(
        &self,
        field: &str,
        dir: &Path,
        files: BTreeMap<String, Spanned<String>>,
    ) -> Result<BTreeMap<String, String>, KitError> {
        let mut out = BTreeMap::new();
        for (dst, src) in files {
            if dst.starts_with('/') || dst.split('/').any(|c| c == "..") {
                return Err(self.err(
                    Some(src.span()),
                    field_err(field, FieldProblem::OutsideDir(dst)),
                ));
            }
            let p = dir.join(src.get_ref());
            if !p.exists() {
                return Err(self.err(
                    Some(src.span()),
                    field_err(format!("{field}.\"{dst}\""), FieldProblem::NoTemplate(p)),
                ));
            }
            out.insert(dst, src.into_inner());
        }
        Ok(out)
    }
}

/// A `local.version` or `local.date` command: absent, or a non-empty argv.
pub(super) fn local_command(
    cx: &Ctx,
    field: &str,
    c: &Option<Spanned<CommandTemplate>>,
) -> Result<Option<CommandTemplate>, KitError> {
    match c {
        Some(v) if v.get_ref().is_empty() => Err(cx.err(
            Some(v.span()),
            field_err(format!("local.{field}"), FieldProblem::CommandNoProgram),
        )),
        Some(v) => Ok(Some(v.get_ref().clone())),
        None => Ok(None),
    }
}

/// A shape's `expect` may name only outcomes a run can observe and compare against.
pub(super) fn check_expect(cx: &Ctx, field: &str, s: &RawShape) -> Result<(), KitError> {
    for (what, val) in [("eof", &s.expect.eof), ("sigterm", &s.expect.sigterm)] {
        let allowed: &[&str] = if what == "eof" {
            &["exit", "survive"]
        } else {
            &["exit", "ignore"]
        };
        if let Some(v) = val {
            if !allowed.contains(&v.as_str()) {
                return Err(cx.err(
                    Some(s.command.span()),
                    field_err(
                        format!("{field}.expect.{what}"),
                        FieldProblem::NotOneOf {
                            value: v.clone(),
                            allowed,
                        },
                    ),
                ));
            }
        }
    }
    Ok(())
}

// Each section of the file is checked and converted by its own method, so that `parse`
// reads as the list of sections.
impl Ctx<'_> {
    /// `id` and `package`: the fields that name the line.
    pub(super) fn header(&self, raw: &RawKit, dir: &Path) -> Result<(), KitError> {
        let id = raw.id.get_ref();
        if !crate::kits::arg::valid_line(id) {
            return Err(self.err(
                Some(raw.id.span()),
                field_err("id", FieldProblem::BadId(id.clone())),
            ));
        }
        if let Some(dirname) = dir.file_name().and_then(|n| n.to_str()) {
            if dirname != id {
                return Err(self.err(
                    Some(raw.id.span()),
                    field_err(
                        "id",
                        FieldProblem::IdNotDir {
                            id: id.clone(),
                            dir: dirname.to_string(),
                        },
                    ),
                ));
            }
        }
        if raw.package.get_ref().trim().is_empty() {
            return Err(self.err(
                Some(raw.package.span()),
                field_err("package", FieldProblem::Empty),
            ));
        }
        if raw.ecosystem == Ecosystem::Maven && !raw.package.get_ref().contains(':') {
            return Err(self.err(
                Some(raw.package.span()),
                field_err("package", FieldProblem::MavenPackage),
            ));
        }
        Ok(())
    }

    /// Every value of a table of templates uses only known names.
    pub(super) fn map_known(
        &self,
        field: &str,
        m: &BTreeMap<String, Spanned<String>>,
        known: &BTreeSet<String>,
    ) -> Result<(), KitError> {
        for (k, v) in m {
            self.names_known(&format!("{field}.{k}"), v.span(), v.get_ref(), known)?;
        }
        Ok(())
    }

    pub(super) fn bootstrap(
        &self,
        raw: Vec<RawBootstrap>,
        known: &BTreeSet<String>,
    ) -> Result<Vec<Bootstrap>, KitError> {
        let mut bootstrap = Vec::new();
        for (i, b) in raw.into_iter().enumerate() {
            self.names_known(
                &format!("bootstrap[{i}].creates"),
                b.creates.span(),
                b.creates.get_ref(),
                known,
            )?;
            let steps =
                self.steps_known(&format!("bootstrap[{i}].steps"), &Some(b.steps), known)?;
            bootstrap.push(Bootstrap {
                name: b.name,
                creates: b.creates.into_inner(),
                steps,
            });
        }
        Ok(bootstrap)
    }

    pub(super) fn release(
        &self,
        raw: RawRecipe,
        known: &BTreeSet<String>,
    ) -> Result<Recipe, KitError> {
        let release = Recipe {
            lock: self.steps_known("release.lock", &raw.lock, known)?,
            install: self.steps_known("release.install", &raw.install, known)?,
            lockfile: raw.lockfile,
            lock_inputs: raw.lock_inputs.unwrap_or_default(),
            install_inputs: raw.install_inputs.unwrap_or_default(),
            outputs: raw.outputs.unwrap_or_default(),
            vars: plain(raw.vars),
        };
        if release.install.is_empty() {
            return Err(self.err(None, field_err("release.install", FieldProblem::NoSteps)));
        }
        if !release.lock.is_empty() && release.lockfile.is_none() {
            return Err(self.err(
                raw.lock.as_ref().map(|l| l.span()),
                field_err("release.lockfile", FieldProblem::NoLockfile),
            ));
        }
        Ok(release)
    }

    /// `[local]`, whose unset recipe parts are the release's.
    pub(super) fn local(
        &self,
        l: RawLocal,
        release: &Recipe,
        known: &BTreeSet<String>,
    ) -> Result<LocalRecipe, KitError> {
        self.map_known("local.vars", &l.vars, known)?;
        if let Some(a) = &l.artifact {
            if a.get_ref().matches('*').count() > 1 || a.get_ref().contains('/') {
                return Err(self.err(
                    Some(a.span()),
                    field_err("local.artifact", FieldProblem::BadArtifact),
                ));
            }
        }
        let version = local_command(self, "version", &l.version)?;
        let date = local_command(self, "date", &l.date)?;
        Ok(LocalRecipe {
            exclude: l.exclude,
            build: self.steps_known("local.build", &l.build, known)?,
            artifact: l.artifact.map(Spanned::into_inner),
            version,
            date,
            recipe: Recipe {
                lock: match &l.lock {
                    Some(_) => self.steps_known("local.lock", &l.lock, known)?,
                    None => release.lock.clone(),
                },
                install: match &l.install {
                    Some(_) => self.steps_known("local.install", &l.install, known)?,
                    None => release.install.clone(),
                },
                lockfile: l.lockfile.or_else(|| release.lockfile.clone()),
                lock_inputs: l.lock_inputs.unwrap_or_else(|| release.lock_inputs.clone()),
                install_inputs: l
                    .install_inputs
                    .unwrap_or_else(|| release.install_inputs.clone()),
                outputs: l.outputs.unwrap_or_else(|| release.outputs.clone()),
                vars: plain(l.vars),
            },
        })
    }

    pub(super) fn exclusive(
        &self,
        raw: Option<Spanned<String>>,
    ) -> Result<Option<String>, KitError> {
        match raw {
            Some(x) if !crate::kits::arg::valid_line(x.get_ref()) => Err(self.err(
                Some(x.span()),
                field_err("exclusive", FieldProblem::BadLockName(x.get_ref().clone())),
            )),
            x => Ok(x.map(Spanned::into_inner)),
        }
    }

    pub(super) fn shapes(
        &self,
        raw: BTreeMap<String, RawShape>,
        known: &BTreeSet<String>,
    ) -> Result<Vec<Shape>, KitError> {
        if raw.is_empty() {
            return Err(self.err(None, field_err("shapes", FieldProblem::NoShapes)));
        }
        raw.into_iter()
            .map(|(name, s)| self.shape(name, s, known))
            .collect()
    }

    pub(super) fn shape(
        &self,
        name: String,
        s: RawShape,
        known: &BTreeSet<String>,
    ) -> Result<Shape, KitError> {
        if !crate::kits::arg::valid_line(&name) {
            return Err(self.err(
                Some(s.command.span()),
                field_err(format!("shapes.{name}"), FieldProblem::BadShapeName),
            ));
        }
        let field = format!("shapes.{name}");
        if s.command.get_ref().trim().is_empty() {
            return Err(self.err(
                Some(s.command.span()),
                field_err(format!("{field}.command"), FieldProblem::Empty),
            ));
        }
        self.names_known(
            &format!("{field}.command"),
            s.command.span(),
            s.command.get_ref(),
            known,
        )?;
        for a in &s.args {
            self.names_known(&format!("{field}.args"), a.span(), a.get_ref(), known)?;
        }
        self.map_known(&format!("{field}.env"), &s.env, known)?;
        check_expect(self, &field, &s)?;
        Ok(Shape {
            name,
            description: s.description,
            command: s.command.into_inner(),
            args: s.args.into_iter().map(Spanned::into_inner).collect(),
            env: plain(s.env),
            inflight: s.inflight.map(|i| {
                let i = InflightRequest::from(i);
                (i.method, i.params.unwrap_or(serde_json::Value::Null))
            }),
            expect: s.expect,
        })
    }

    pub(super) fn variants(
        &self,
        raw: Vec<RawVariant>,
        dir: &Path,
        shapes: &[Shape],
        known: &BTreeSet<String>,
    ) -> Result<Vec<Variant>, KitError> {
        let shape_names: BTreeSet<&str> = shapes.iter().map(|s| s.name.as_str()).collect();
        let mut variants = Vec::new();
        let mut seen = BTreeSet::new();
        for (i, v) in raw.into_iter().enumerate() {
            let field = format!("variant[{i}]");
            if !seen.insert(v.name.get_ref().clone()) {
                return Err(self.err(
                    Some(v.name.span()),
                    field_err(
                        format!("{field}.name"),
                        FieldProblem::VariantTwice(v.name.get_ref().clone()),
                    ),
                ));
            }
            let versions = self.req(&format!("{field}.versions"), &v.versions)?;
            self.map_known(&format!("{field}.vars"), &v.vars, known)?;
            let shapes_sub = self.shape_subset(&field, v.shapes, &shape_names)?;
            variants.push(Variant {
                name: v.name.into_inner(),
                versions,
                files: self.files(&format!("{field}.files"), dir, v.files)?,
                vars: plain(v.vars),
                shapes: shapes_sub,
                note: v.note,
            });
        }
        if variants.is_empty() {
            return Err(self.err(None, field_err("variant", FieldProblem::NoVariants)));
        }
        Ok(variants)
    }

    /// A variant's `shapes`: every name must be a shape the kit defines.
    pub(super) fn shape_subset(
        &self,
        field: &str,
        raw: Option<Spanned<Vec<String>>>,
        shape_names: &BTreeSet<&str>,
    ) -> Result<Vec<String>, KitError> {
        let Some(s) = raw else {
            return Ok(Vec::new());
        };
        if let Some(bad) = s
            .get_ref()
            .iter()
            .find(|n| !shape_names.contains(n.as_str()))
        {
            return Err(self.err(
                Some(s.span()),
                field_err(
                    format!("{field}.shapes"),
                    FieldProblem::NoSuchShape(bad.clone()),
                ),
            ));
        }
        Ok(s.into_inner())
    }

    pub(super) fn untestable(&self, raw: Vec<RawUntestable>) -> Result<Vec<Untestable>, KitError> {
        let mut untestable = Vec::new();
        for (i, u) in raw.into_iter().enumerate() {
            let versions = self.req(&format!("untestable[{i}].versions"), &u.versions)?;
            if u.reason.get_ref().trim().is_empty() {
                return Err(self.err(
                    Some(u.reason.span()),
                    field_err(format!("untestable[{i}].reason"), FieldProblem::SayWhy),
                ));
            }
            untestable.push(Untestable {
                versions,
                reason: u.reason.into_inner(),
            });
        }
        Ok(untestable)
    }

    pub(super) fn hints(&self, raw: Vec<RawHint>) -> Result<Vec<Hint>, KitError> {
        let mut hints = Vec::new();
        for (i, h) in raw.into_iter().enumerate() {
            let versions = self.req(&format!("hint[{i}].versions"), &h.versions)?;
            if h.text.get_ref().trim().is_empty() {
                return Err(self.err(
                    Some(h.text.span()),
                    field_err(format!("hint[{i}].text"), FieldProblem::Empty),
                ));
            }
            hints.push(Hint {
                versions,
                endings: h.endings,
                text: h.text.into_inner().trim().to_string(),
            });
        }
        Ok(hints)
    }
}
