package main

// The noise filter (shared/outcome Policy, docs/swarm-comments.md
// "Reactions"): a finding kind dismissed dismissThreshold times, by at
// least dismissMinPeople people with a say across dismissMinReviews
// reviews, with no acceptance under a depot path scope dismissScopeDepth
// directories deep, is withheld there; never one at or above the gate
// (swarmGateSeverity, high when off). A review rules file's
// dismissal_suppression overrides the threshold for its paths. Their
// ranges and defaults are the declaration's (shared/settings;
// validateDeclared checks cdk.json against it), and so are the functions
// given them (their ReadBy: declaredEnv).
