//! The tree made canonical before evaluation: nested and/or flattened,
//! double negation dropped.

use super::Expr;

/// Flatten nested and/or, drop double negation.
pub(super) fn simplify(e: Expr) -> Expr {
    match e {
        Expr::And(v) => {
            let mut out = Vec::new();
            for x in v.into_iter().map(simplify) {
                match x {
                    Expr::And(inner) => out.extend(inner),
                    other => out.push(other),
                }
            }
            if out.len() == 1 {
                out.pop().unwrap()
            } else {
                Expr::And(out)
            }
        }
        Expr::Or(v) => {
            let mut out = Vec::new();
            for x in v.into_iter().map(simplify) {
                match x {
                    Expr::Or(inner) => out.extend(inner),
                    other => out.push(other),
                }
            }
            if out.len() == 1 {
                out.pop().unwrap()
            } else {
                Expr::Or(out)
            }
        }
        Expr::Not(x) => match simplify(*x) {
            Expr::Not(y) => *y,
            y => Expr::Not(Box::new(y)),
        },
        a => a,
    }
}
