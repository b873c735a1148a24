use super::*;

/// A write that fails part-way (a full disk) leaves neither a temporary file nor a
/// changed destination; a planted file under a temporary-looking name is not touched.
#[test]
fn a_failed_replace_leaves_no_temporary_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out.fl");
    std::fs::write(&path, b"old").unwrap();
    std::fs::write(dir.path().join("out.fl.tmp"), b"planted").unwrap();
    let err = replace_file(&path, &mut |f| {
        f.write_all(b"partial")?;
        Err(std::io::Error::from_raw_os_error(28))
    })
    .unwrap_err();
    assert!(err.to_string().contains("out.fl"), "{err}");
    assert!(err.to_string().contains("No space left on device"), "{err}");
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["out.fl", "out.fl.tmp"]);
    assert_eq!(std::fs::read(&path).unwrap(), b"old");
    assert_eq!(
        std::fs::read(dir.path().join("out.fl.tmp")).unwrap(),
        b"planted"
    );
    replace_file(&path, &mut |f| f.write_all(b"new")).unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), b"new");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
}

/// A payload with one of everything, independent of anchor choice and DFA building.
fn sample() -> Payload {
    Payload {
        name: "n".into(),
        version: "v".into(),
        hash: "h".into(),
        signatures: vec![SignatureRecord {
            id: "a.b.c".into(),
            revision: 1,
            title: "t".into(),
            role: 0,
            severity: 1,
            category: "c".into(),
            tags: vec!["x".into()],
            priority: -1,
            survivable: false,
            remediation: "r".into(),
            source: "s".into(),
            anchor: 1,
            quiet_levels: 1,
            patterns: vec![0],
        }],
        patterns: vec![PatternRecord {
            signature: 0,
            marker: 0,
            source: "boom".into(),
            required: vec![b"boom".to_vec()],
            dfa: Some(vec![1, 2, 3]),
            dfa_len: 12,
        }],
        anchors: vec![b"boom".to_vec()],
        packed_anchors: 1,
    }
}

#[test]
fn layout_fingerprint() {
    let bytes = rkyv::to_bytes::<rancor::Error>(&sample()).unwrap();
    let fingerprint = xxhash_rust::xxh3::xxh3_64(&bytes);
    // Recorded for ARCHIVE_FORMAT 4. If this fails, the payload layout changed: bump ARCHIVE_FORMAT (so
    // older archives get the "archive format N" message) and record the new value.
    assert_eq!(
        (ARCHIVE_FORMAT, HEADER, fingerprint),
        (4, 32, 0x6185_1bc6_695a_c2cf),
        "payload layout changed: bump ARCHIVE_FORMAT and record {fingerprint:#x}"
    );
}

fn header(format: u32) -> Vec<u8> {
    let mut b = ARCHIVE_MAGIC.to_vec();
    b.extend_from_slice(&format.to_le_bytes());
    b.extend_from_slice(&[0; 20]);
    b
}

#[test]
fn format_mismatch_says_what_to_do() {
    let path = Path::new("db.fl");
    let remedy = |e: crate::Error| match e {
        crate::Error::Archive { reason, .. } => reason.remedy(),
        _ => None,
    };
    let older = check_header(&header(ARCHIVE_FORMAT - 1), path).unwrap_err();
    assert_eq!(
        older.to_string(),
        format!(
            "db.fl: archive format {}, this faultline reads format {ARCHIVE_FORMAT}",
            ARCHIVE_FORMAT - 1
        )
    );
    assert_eq!(remedy(older), Some(crate::ArchiveRemedy::Recompile));
    let newer = check_header(&header(ARCHIVE_FORMAT + 1), path).unwrap_err();
    assert_eq!(
        remedy(newer),
        Some(crate::ArchiveRemedy::UpgradeOrRecompile)
    );
}

#[test]
fn header_damage_is_named() {
    let path = Path::new("db.fl");
    let mut b = header(ARCHIVE_FORMAT);
    b[12] = 1;
    let e = check_header(&b, path).unwrap_err().to_string();
    assert!(e.contains("reserved"), "{e}");
    let e = check_header(&b[..20], path).unwrap_err().to_string();
    assert!(e.contains("shorter than the 32-byte header"), "{e}");
    let mut b = header(ARCHIVE_FORMAT);
    b.extend_from_slice(b"extra");
    let e = check_header(&b, path).unwrap_err().to_string();
    assert!(e.contains("trailing bytes"), "{e}");
}

#[test]
fn the_embedded_database_confirms_with_stored_dfas_or_literals_only() {
    let db = crate::testing::database();
    let line = b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3 has a total capacity of 79.19 GiB of which 1.01 GiB is free.";
    assert!(!db.match_line(line).signatures.is_empty());
    for (p, pat) in db.matcher.patterns.iter().enumerate() {
        match &pat.confirm {
            Confirm::Archived { has_dfa, lazy, .. } => {
                // A plain signature pattern is confirmed by its literal: it stores no DFA.
                // The structural markers always store one.
                let marker = matches!(pat.owner, Owner::Marker(_));
                assert!(
                    *has_dfa == (marker || !pat.plain),
                    "pattern {p}: DFA {has_dfa}, plain {}",
                    pat.plain
                );
                assert!(lazy.get().is_none(), "pattern {p} compiled a regex");
            }
            Confirm::Regex(_) => panic!("pattern {p} was compiled at load"),
        }
    }
}

#[test]
fn more_packed_anchors_than_anchors_is_named() {
    let mut payload = sample();
    payload.packed_anchors = 2;
    let body = rkyv::to_bytes::<rancor::Error>(&payload).unwrap();
    let mut bytes = ARCHIVE_MAGIC.to_vec();
    bytes.extend_from_slice(&ARCHIVE_FORMAT.to_le_bytes());
    bytes.extend_from_slice(&0u32.to_le_bytes());
    bytes.extend_from_slice(&(body.len() as u64).to_le_bytes());
    bytes.extend_from_slice(&xxhash_rust::xxh3::xxh3_64(&body).to_le_bytes());
    bytes.extend_from_slice(&body);
    let e = parts(&bytes, Path::new("db.fl"))
        .err()
        .expect("rejected")
        .to_string();
    assert!(
        e.contains("db.fl") && e.contains("2 packed anchors of 1"),
        "{e}"
    );
}

#[test]
fn codes_round_trip() {
    for r in [
        Role::Cause,
        Role::Symptom,
        Role::Noise,
        Role::Start,
        Role::Progress,
        Role::Completed,
        Role::Stopped,
    ] {
        assert_eq!(role_from(role_code(r)), Some(r));
    }
    for s in [
        Severity::Fatal,
        Severity::Error,
        Severity::Warning,
        Severity::Info,
    ] {
        assert_eq!(severity_from(severity_code(s)), Some(s));
    }
    assert_eq!(role_from(7), None);
    assert_eq!(severity_from(4), None);
}
