package main

import (
	"net"
	"net/url"
	"slices"
	"strings"

	"github.com/criticizer/criticizer/shared/domain"
)

// Swarm's place in the network, and the gate on its test runs.
//
// Four functions call Swarm: fetch (the review, the {update} callback),
// llm and notify ({pass}/{fail}; notify's comments) and the sweeper (the
// comment reconciler; a dead letter's {fail}). A Swarm reachable only inside
// the studio's network (swarmPrivate, or a private host in swarmUrl) puts
// every one of them in the VPC; without a VPC, synth refuses it.

// swarmIsPrivate reports whether the environment's Swarm is reachable only
// inside the studio's network: declared (swarmPrivate) or evident from the
// host (a private or loopback address, or a name no public DNS serves).
func (c EnvConfig) swarmIsPrivate() bool {
	if c.SwarmURL == "" {
		return false
	}
	if c.SwarmPrivate {
		return true
	}
	u, err := url.Parse(c.SwarmURL)
	if err != nil {
		return false
	}
	host := strings.ToLower(u.Hostname())
	if ip := net.ParseIP(host); ip != nil {
		return ip.IsPrivate() || ip.IsLoopback() || ip.IsLinkLocalUnicast()
	}
	if !strings.Contains(host, ".") {
		return true
	}
	for _, suffix := range []string{".internal", ".local", ".lan", ".corp", ".intranet", ".home.arpa"} {
		if strings.HasSuffix(host, suffix) {
			return true
		}
	}
	return false
}

// validateSwarmNetwork: a private Swarm needs the VPC its callers run in;
// the gate's severity is one the review uses.
func validateSwarmNetwork(c EnvConfig, p *problems) {
	if c.SwarmPrivate && c.SwarmURL == "" {
		p.add("swarmPrivate is set but swarmUrl is empty")
	}
	if c.swarmIsPrivate() && c.VPC == nil && !c.isLocal {
		p.add("swarmUrl %q is private (swarmPrivate or a private host): set vpc, so every function that calls Swarm (fetch, llm, notify, sweeper) runs where it can reach it", c.SwarmURL)
	}
	if g := c.SwarmGateSeverity; g != "" && g != "off" && !slices.Contains(domain.Severities, g) {
		p.add("swarmGateSeverity %q: want off or one of %s", g, strings.Join(domain.Severities, ", "))
	}
	if c.SwarmGateSeverity != "" && c.SwarmGateSeverity != "off" && c.SwarmURL == "" {
		p.add("swarmGateSeverity is set but swarmUrl is empty: the gate fails Swarm test runs")
	}
}
