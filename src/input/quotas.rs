//! The account's Lattice quotas (`quotas:` in latgen.yaml) and the fixed limits beside them
//! (the HTTPRoute CRD's 16 rules, a listener's 100 priorities, an auth policy's 10 KB), with
//! the arithmetic every stage does on them: how many rules a shared group holds and what
//! bounds it, the room left in a group, and whether a route or a policy is over a limit.
//! Validation, the planner, the check and the rollout judge all ask here, so that the
//! limits are worked out in one place and cannot disagree.

use serde::Deserialize;

use latgen_sim::platform;

/// The largest auth policy this tool writes, in bytes: the VPC Lattice quota is "10 KB, not
/// adjustable" (quotas page), and older API references give the policy a maximum length of
/// 10,000; the smaller number is the one every Region takes.
pub(crate) const POLICY_MAX_BYTES: usize = 10_000;

/// The rules one HTTPRoute holds, as the CRD's `maxItems` says, as a rule count.
const CRD_RULES: u32 = platform::CRD_MAX_RULES as u32;

/// Lattice service quotas of the account.
#[derive(Debug, Clone, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase", default)]
pub(crate) struct Quotas {
    /// Lattice "rules per listener" quota of the account.
    pub rules_per_service: u32,
    /// Lattice "target groups per service" quota.
    pub target_groups_per_service: u32,
    /// Rules left free in each shared group, e.g. so a path can be renamed in place
    /// (the controller creates the new rule before deleting the old one).
    pub reserved_rules: u32,
}

impl Default for Quotas {
    fn default() -> Self {
        Quotas {
            rules_per_service: 10,
            target_groups_per_service: 10,
            reserved_rules: 0,
        }
    }
}

/// The limit a route's rules are over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RuleLimit {
    /// The HTTPRoute CRD's: the API server refuses the route.
    Crd,
    /// Lattice's "rules per listener" quota: the controller drops the rules past it.
    Quota,
}

impl Quotas {
    /// Quotas with a rule quota of `rules` and the other values at their defaults.
    #[cfg(test)]
    pub fn with_rule_quota(rules: usize) -> Quotas {
        Quotas {
            rules_per_service: u32::try_from(rules).unwrap_or(u32::MAX),
            ..Quotas::default()
        }
    }

    /// The most rules an HTTPRoute holds (the CRD's limit), whatever the quota.
    pub fn crd_rules() -> usize {
        platform::CRD_MAX_RULES
    }

    /// Rules one shared group may hold: the account quota less the reserve, and never more
    /// than the HTTPRoute CRD allows.
    pub fn rules_per_group(&self) -> u32 {
        self.quota_less_reserve().min(CRD_RULES)
    }

    fn quota_less_reserve(&self) -> u32 {
        self.rules_per_service.saturating_sub(self.reserved_rules)
    }

    /// Whether the CRD's limit, not the account's quota, is what bounds a group: then no
    /// quota increase makes a group hold more.
    pub fn crd_bounds_groups(&self) -> bool {
        self.quota_less_reserve() > CRD_RULES
    }

    /// Where [`Quotas::rules_per_group`] comes from, in words for a finding, and whether it
    /// can be raised (the Lattice quota can, the CRD's limit cannot).
    pub fn rules_per_group_source(&self) -> (String, bool) {
        if self.crd_bounds_groups() {
            return (
                format!("the HTTPRoute CRD takes {CRD_RULES} rules a route"),
                false,
            );
        }
        (
            format!(
                "Lattice's \"rules per listener\" quota (`quotas.rulesPerService` in latgen.yaml: {}) less the rules kept free (`quotas.reservedRules`: {})",
                self.rules_per_service, self.reserved_rules
            ),
            true,
        )
    }

    /// Whether `more` rules fit a group that holds `used`.
    pub fn rules_fit(&self, used: u32, more: u32) -> bool {
        used + more <= self.rules_per_group()
    }

    /// The rules a group that holds `used` has room for.
    pub fn headroom(&self, used: u32) -> u32 {
        self.rules_per_group().saturating_sub(used)
    }

    /// The fewest groups that hold `rules` rules.
    pub fn groups_for_rules(&self, rules: u64) -> usize {
        rules.div_ceil(u64::from(self.rules_per_group()).max(1)) as usize
    }

    /// The Lattice rule quota of one route, as a count of rules.
    pub fn rule_quota(&self) -> usize {
        self.rules_per_service as usize
    }

    /// Whether a route of `rules` rules is over the Lattice quota, past which the
    /// controller drops rules without an error.
    pub fn over_rule_quota(&self, rules: usize) -> bool {
        rules > self.rule_quota()
    }

    /// The limit a route of `rules` rules is over, the CRD's first; None within both.
    pub fn route_over(&self, rules: usize) -> Option<RuleLimit> {
        if rules > Quotas::crd_rules() {
            Some(RuleLimit::Crd)
        } else if self.over_rule_quota(rules) {
            Some(RuleLimit::Quota)
        } else {
            None
        }
    }

    /// Whether a route of `rules` rules is over what one HTTPRoute holds.
    pub fn over_crd(rules: usize) -> bool {
        rules > Quotas::crd_rules()
    }

    /// Whether the rule quota is more than the priorities a Lattice listener has.
    pub fn over_priorities(&self) -> bool {
        self.rules_per_service as usize > platform::LATTICE_MAX_PRIORITY
    }

    /// The target groups one service may route to.
    pub fn target_groups(&self) -> usize {
        self.target_groups_per_service as usize
    }

    /// Whether a service that routes to `backends` target groups is within the quota.
    pub fn target_groups_fit(&self, backends: usize) -> bool {
        backends <= self.target_groups()
    }

    /// How many previews one preview group holds: a rule and a target group each.
    pub fn previews_per_group(&self) -> usize {
        (self.rules_per_group().min(self.target_groups_per_service) as usize).max(1)
    }

    /// Whether an auth policy of `bytes` bytes is one Lattice takes.
    pub fn policy_fits(bytes: usize) -> bool {
        bytes <= POLICY_MAX_BYTES
    }

    /// What in the quotas leaves no room for a rule or a target group: each problem and
    /// what to do about it.
    pub fn problems(&self) -> Vec<(String, &'static str)> {
        let mut out = Vec::new();
        if self.rules_per_service == 0 {
            out.push((
                "quotas.rulesPerService is 0".into(),
                "set it to the account's Lattice rules-per-listener quota",
            ));
        } else if self.rules_per_group() == 0 {
            out.push((
                "quotas.reservedRules leaves no room for rules in a group".into(),
                "lower quotas.reservedRules",
            ));
        }
        if self.target_groups_per_service == 0 {
            out.push((
                "quotas.targetGroupsPerService is 0".into(),
                "set it to the account's Lattice target-groups-per-service quota",
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capacity_never_exceeds_the_crd_limit() {
        let mut q = Quotas::default();
        assert_eq!(q.rules_per_group(), 10);
        assert!(!q.crd_bounds_groups());
        q.rules_per_service = 40;
        assert_eq!(q.rules_per_group(), CRD_RULES);
        assert!(q.crd_bounds_groups());
        assert!(!q.rules_per_group_source().1);
        q.reserved_rules = 30;
        assert_eq!(q.rules_per_group(), 10);
        assert!(q.rules_per_group_source().1);
    }

    #[test]
    fn a_route_is_over_the_crd_before_the_quota() {
        let q = Quotas::with_rule_quota(40);
        assert_eq!(q.route_over(16), None);
        assert_eq!(q.route_over(17), Some(RuleLimit::Crd));
        let q = Quotas::default();
        assert_eq!(q.route_over(10), None);
        assert_eq!(q.route_over(11), Some(RuleLimit::Quota));
    }
}
