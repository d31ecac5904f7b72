//! `solverlab export-system`: a frame's linear system in Matrix Market, checked entry by entry.

mod common;

use std::path::Path;

use common::{solverlab, stderr};

/// Reads a Matrix Market file into (rows, cols, triplets) or an array into a vector.
fn mtx(path: &Path) -> (usize, usize, Vec<(usize, usize, f64)>, bool) {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let header = lines.next().unwrap().to_string();
    assert!(header.starts_with("%%MatrixMarket matrix"), "{header}");
    let mut data = lines.filter(|l| !l.starts_with('%'));
    let dims: Vec<usize> = data.next().unwrap().split_whitespace().map(|x| x.parse().unwrap()).collect();
    if header.contains("array") {
        let v: Vec<(usize, usize, f64)> = data.enumerate().map(|(i, l)| (i, 0, l.trim().parse().unwrap())).collect();
        assert_eq!(v.len(), dims[0]);
        return (dims[0], dims[1], v, false);
    }
    let v: Vec<(usize, usize, f64)> = data
        .map(|l| {
            let p: Vec<&str> = l.split_whitespace().collect();
            (p[0].parse::<usize>().unwrap() - 1, p[1].parse::<usize>().unwrap() - 1, p[2].parse().unwrap())
        })
        .collect();
    assert_eq!(v.len(), dims[2]);
    (dims[0], dims[1], v, header.contains("symmetric"))
}

#[test]
fn export_system_writes_a_consistent_matrix_market_system() {
    let out = common::absent("cli", "export-system");
    let o = solverlab(&[
        "export-system",
        "--scene",
        "chain",
        "--set",
        "links=6",
        "--set",
        "compliance=1e-6",
        "--solver",
        // The projection: its system is the chain's rows alone, and its solve starts from the
        // last frame's multipliers (the SQP methods add curvature rows and start from zero).
        "{ kind = \"cg\", forcing = \"fixed\", newton = \"projection\" }",
        "--frame",
        "3",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let (m, cols, j, _) = mtx(&out.join("J.mtx"));
    assert_eq!((m, cols), (6, 21));
    let (_, _, a, symmetric) = mtx(&out.join("A.mtx"));
    assert!(symmetric);
    let w: Vec<f64> = mtx(&out.join("w.mtx")).2.iter().map(|t| t.2).collect();
    let shift: Vec<f64> = mtx(&out.join("shift.mtx")).2.iter().map(|t| t.2).collect();
    let rhs: Vec<f64> = mtx(&out.join("rhs.mtx")).2.iter().map(|t| t.2).collect();
    let sol: Vec<f64> = mtx(&out.join("solution.mtx")).2.iter().map(|t| t.2).collect();
    let prev: Vec<f64> = mtx(&out.join("lambda_prev.mtx")).2.iter().map(|t| t.2).collect();
    assert!(prev.iter().any(|&l| l != 0.0), "frame 3 is warm-started");
    // A = J W Jᵀ + diag(shift), entry by entry (lower triangle stored).
    let mut dense = vec![vec![0.0; m]; m];
    for &(r1, c1, v1) in &j {
        for &(r2, c2, v2) in &j {
            if c1 == c2 {
                dense[r1][r2] += v1 * w[c1] * v2;
            }
        }
    }
    for (i, s) in shift.iter().enumerate() {
        dense[i][i] += s;
    }
    for &(r, c, v) in &a {
        assert!(c <= r);
        assert!((dense[r][c] - v).abs() <= 1e-12 * dense[r][r].abs(), "A[{r}][{c}]");
    }
    // The stored solution solves the system to CG's tolerance.
    let res: f64 =
        (0..m).map(|i| (rhs[i] - (0..m).map(|k| dense[i][k] * sol[k]).sum::<f64>()).powi(2)).sum::<f64>().sqrt();
    let bn: f64 = rhs.iter().map(|x| x * x).sum::<f64>().sqrt();
    assert!(res <= 1e-7 * bn, "{res:e} vs {bn:e}");
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("system.json")).unwrap()).unwrap();
    assert_eq!(meta["rows"], 6);
    assert_eq!(meta["frame"], 3);
    // The first outer iteration's system as first posed: undamped, its ε written out and part of
    // every shift (compliance α/h² = 1e-6 × 3600 plus ε).
    assert_eq!(meta["outer_iteration"], 1);
    assert_eq!(meta["damping"], 1.0);
    let eps = meta["regularization_epsilon"].as_f64().unwrap();
    assert!(eps > 0.0 && shift.iter().all(|s| (s - (1e-6 * 3600.0 + eps)).abs() < 1e-9 * s));
}

#[test]
fn export_system_selects_an_outer_iteration_and_refuses_one_that_did_not_run() {
    let out = common::absent("cli", "export-outer");
    let args = |outer: &str| {
        vec![
            "export-system".to_string(),
            "--scene".into(),
            "chain".into(),
            "--set".into(),
            "links=20".into(),
            "--solver".into(),
            "direct".into(),
            "--frame".into(),
            "30".into(),
            "--outer".into(),
            outer.into(),
            "--out".into(),
            out.to_str().unwrap().into(),
        ]
    };
    let o = solverlab(&args("2").iter().map(String::as_str).collect::<Vec<_>>());
    assert!(o.status.success(), "{}", stderr(&o));
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("system.json")).unwrap()).unwrap();
    assert_eq!(meta["outer_iteration"], 2);
    let o = solverlab(&args("60").iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--outer 60"), "{}", stderr(&o));
}
