//! [`RowSet`]: the compact store the solvers gather rows into.

use super::*;

/// A row's scalars in a [`RowSet`] (48 bytes).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RowHead {
    /// Stable id (see [`constraint_row_id`], [`contact_row_id`]).
    pub id: u64,
    /// The value `C` (m).
    pub c: f64,
    /// Compliance α (m/N).
    pub compliance: f64,
    /// `∂C/∂t` (m/s).
    pub dc_dt: f64,
    /// The row's first slot in the particle and gradient arrays.
    start: u32,
    /// Its contact data in the contact array; `u32::MAX` for none.
    contact: u32,
    /// Number of particles.
    n: u8,
    /// Equality or inequality.
    pub kind: RowKind,
}

/// Rows in compact form: the scalars of each row in one array ([`RowHead`]), the particles and
/// gradients of all rows in two more, and the contact data of the contact rows in a fourth. A
/// stick takes 104 bytes here against 352 as a [`Row`], which has room for eight particles; the
/// Newton loop gathers and reads its rows at every outer iteration, and a cloth's rows do not
/// fit in cache.
#[derive(Clone, Debug, Default)]
pub struct RowSet {
    heads: Vec<RowHead>,
    particles: Vec<u32>,
    grads: Vec<Vec3>,
    contacts: Vec<ContactInfo>,
}

/// One row of a [`RowSet`], borrowed: the fields of a [`Row`], with the particles and gradients
/// as slices of length `n`.
#[derive(Clone, Copy, Debug)]
pub struct RowView<'a> {
    /// Stable id.
    pub id: u64,
    /// The value `C` (m).
    pub c: f64,
    /// Compliance α (m/N).
    pub compliance: f64,
    /// `∂C/∂t` (m/s).
    pub dc_dt: f64,
    /// Equality or inequality.
    pub kind: RowKind,
    /// The particles (or coordinate blocks).
    pub particles: &'a [u32],
    /// `∇C` with respect to each.
    pub grad: &'a [Vec3],
    /// Contact data, for collider rows.
    pub contact: Option<&'a ContactInfo>,
}

impl RowView<'_> {
    /// `Σ wᵢ |∇ᵢC|²` for inverse masses `w` (the same sum as [`Row::w_grad2`]).
    #[inline]
    pub fn w_grad2(&self, w: &[f64]) -> f64 {
        self.particles.iter().zip(self.grad).map(|(&p, g)| w[p as usize] * g.norm_squared()).sum()
    }

    /// The row as a [`Row`].
    pub fn to_row(&self) -> Row {
        let particles: Vec<usize> = self.particles.iter().map(|&p| p as usize).collect();
        Row {
            id: self.id,
            n: particles.len(),
            particles: padded(&particles),
            grad: padded_grad(self.grad),
            c: self.c,
            dc_dt: self.dc_dt,
            kind: self.kind,
            compliance: self.compliance,
            contact: self.contact.copied(),
        }
    }
}

impl RowSet {
    /// Number of rows.
    #[inline]
    pub fn len(&self) -> usize {
        self.heads.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.heads.is_empty()
    }

    /// Removes every row, keeping the memory.
    pub fn clear(&mut self) {
        self.heads.clear();
        self.particles.clear();
        self.grads.clear();
        self.contacts.clear();
    }

    /// The rows' scalars, in row order.
    #[inline]
    pub fn heads(&self) -> &[RowHead] {
        &self.heads
    }

    /// Row `i`.
    #[inline]
    pub fn get(&self, i: usize) -> RowView<'_> {
        self.view(&self.heads[i])
    }

    #[inline]
    fn view<'a>(&'a self, h: &RowHead) -> RowView<'a> {
        let slots = h.start as usize..h.start as usize + h.n as usize;
        RowView {
            id: h.id,
            c: h.c,
            compliance: h.compliance,
            dc_dt: h.dc_dt,
            kind: h.kind,
            particles: &self.particles[slots.clone()],
            grad: &self.grads[slots],
            contact: (h.contact != u32::MAX).then(|| &self.contacts[h.contact as usize]),
        }
    }

    /// The rows in order.
    pub fn iter(&self) -> impl Iterator<Item = RowView<'_>> + '_ {
        self.heads.iter().map(|h| self.view(h))
    }

    /// Row `i`'s slots in [`RowSet::all_particles`] and [`RowSet::all_grads`].
    #[inline]
    pub fn slots(&self, i: usize) -> std::ops::Range<usize> {
        let h = &self.heads[i];
        h.start as usize..h.start as usize + h.n as usize
    }

    /// Every row's particles, row after row.
    pub fn all_particles(&self) -> &[u32] {
        &self.particles
    }

    /// Every row's gradients, row after row.
    pub fn all_grads(&self) -> &[Vec3] {
        &self.grads
    }

    /// Appends a row.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub fn push_fields(
        &mut self,
        id: u64,
        particles: &[usize],
        grad: &[Vec3],
        c: f64,
        dc_dt: f64,
        kind: RowKind,
        compliance: f64,
        contact: Option<ContactInfo>,
    ) {
        debug_assert!(particles.len() == grad.len() && particles.len() <= ROW_PARTICLES);
        let start = self.particles.len() as u32;
        self.particles.extend(particles.iter().map(|&p| p as u32));
        self.grads.extend_from_slice(grad);
        let contact = match contact {
            Some(info) => {
                self.contacts.push(info);
                self.contacts.len() as u32 - 1
            }
            None => u32::MAX,
        };
        let n = particles.len() as u8;
        self.heads.push(RowHead { id, c, compliance, dc_dt, start, contact, n, kind });
    }

    /// Appends `row`.
    #[inline(always)]
    pub fn push(&mut self, row: &Row) {
        let n = row.n;
        let (particles, grad) = (&row.particles[..n], &row.grad[..n]);
        self.push_fields(row.id, particles, grad, row.c, row.dc_dt, row.kind, row.compliance, row.contact);
    }

    /// Keeps the first `n` rows (all of them if there are fewer).
    pub fn truncate(&mut self, n: usize) {
        if n >= self.heads.len() {
            return;
        }
        let slot = self.heads[n].start as usize;
        let contacts = self.heads[..n].iter().filter(|h| h.contact != u32::MAX).count();
        self.heads.truncate(n);
        self.particles.truncate(slot);
        self.grads.truncate(slot);
        self.contacts.truncate(contacts);
    }

    /// Keeps the rows whose scalars satisfy `keep`, in order (it sees each row once, in order).
    /// Nothing moves up to the first row dropped.
    pub fn retain(&mut self, mut keep: impl FnMut(&RowHead) -> bool) {
        let Some(first) = self.heads.iter().position(|h| !keep(h)) else { return };
        let mut kept = first;
        let mut slot = self.heads.get(first).map_or(0, |h| h.start as usize);
        let mut contacts = self.heads[..first].iter().filter(|h| h.contact != u32::MAX).count();
        for i in first + 1..self.heads.len() {
            let h = self.heads[i];
            if !keep(&h) {
                continue;
            }
            let (start, n) = (h.start as usize, h.n as usize);
            self.particles.copy_within(start..start + n, slot);
            self.grads.copy_within(start..start + n, slot);
            let contact = match h.contact {
                u32::MAX => u32::MAX,
                k => {
                    self.contacts[contacts] = self.contacts[k as usize];
                    contacts += 1;
                    contacts as u32 - 1
                }
            };
            self.heads[kept] = RowHead { start: slot as u32, contact, ..h };
            slot += n;
            kept += 1;
        }
        self.heads.truncate(kept);
        self.particles.truncate(slot);
        self.grads.truncate(slot);
        self.contacts.truncate(contacts);
    }
}
