package fetch

import "net/netip"

// metadataEndpoint is an address where a cloud hands an instance its
// metadata, and with it often credentials: a scanner that reached one on a
// site's behalf would leak them. The README's table (“Never scanned”) lists
// the same entries, and a test keeps the two alike.
type metadataEndpoint struct {
	Prefix netip.Prefix
	Cloud  string // who answers there, and the name it is reached by
	Source string // where the address is documented
}

// metadataEndpoints lists the metadata addresses of the major clouds. No
// setting admits them (AllowPrivate, AllowAnyPort, an allow-list entry, even
// 0.0.0.0/0 or ::/0), in any spelling the guard reads an IPv4 address from
// (IPv4-mapped, -compatible, -translated, NAT64, 6to4, Teredo, ISATAP).
// Those inside 169.254.0.0/16 or fe80::/10 are refused with the rest of
// link-local space anyway; they are listed so that the refusal names them.
var metadataEndpoints = []metadataEndpoint{
	{mp("169.254.169.254"), "AWS, Google Cloud (metadata.google.internal), Azure, Oracle OCI, DigitalOcean, Hetzner, OpenStack, IBM Cloud VPC, Akamai/Linode",
		"AWS EC2 User Guide, “Retrieve instance metadata”; Google Cloud, “About VM metadata”; Microsoft Learn, “Azure Instance Metadata Service”; OCI, “Getting Instance Metadata”; DigitalOcean, “Droplet Metadata API”; cloud-init, Hetzner datasource; OpenStack Nova, “Metadata service”; IBM Cloud, “About the metadata service for VPC”; Akamai TechDocs, “Metadata service API”"},
	{mp("169.254.170.2"), "AWS ECS task metadata and credentials", "Amazon ECS Developer Guide, “Task IAM role”"},
	{mp("169.254.170.23"), "AWS EKS Pod Identity agent", "Amazon EKS User Guide, “EKS Pod Identity”"},
	{mp("169.254.0.23"), "Tencent Cloud (metadata.tencentyun.com)", "Tencent Cloud CVM, “Querying Instance Metadata”"},
	{mp("169.254.42.42"), "Scaleway", "cloud-init, Scaleway datasource"},
	{mp("fe80::a9fe:a9fe"), "OpenStack Neutron over IPv6", "OpenStack Neutron spec, “IPv6 support in Metadata service” (Ussuri)"},
	{mp("fd00:ec2::254"), "AWS instance metadata over IPv6", "AWS EC2 User Guide, “Retrieve instance metadata”"},
	{mp("fd00:ec2::23"), "AWS EKS Pod Identity agent over IPv6", "Amazon EKS User Guide, “EKS Pod Identity”"},
	{mp("fd20:ce::254"), "Google Cloud metadata server over IPv6", "Google Cloud, “About VM metadata” (IPv6-only VMs)"},
	{mp("fd00:c1::a9fe:a9fe"), "Oracle OCI instance metadata over IPv6", "OCI SDKs, instance-principals signer (oci-python-sdk)"},
	{mp("fd00:42::42"), "Scaleway over IPv6", "cloud-init, Scaleway datasource"},
	{mp("fd00:a9fe:a9fe::1"), "Akamai/Linode over IPv6", "Akamai TechDocs, “Metadata service API”"},
	{mp("fd00:100::100:200"), "Alibaba Cloud over IPv6", "cloud-init pull request 6893, AliYun IPv6 metaserver"},
	{mp("100.100.100.200"), "Alibaba Cloud", "cloud-init, AliYun datasource; Alibaba Cloud ECS, “Instance metadata”"},
	{mp("168.63.129.16"), "Azure WireServer (VM agent, extension settings)", "Microsoft Learn, “What is IP address 168.63.129.16?”"},
	{mp("192.0.0.192"), "Oracle Cloud Infrastructure Classic", "Oracle Compute Classic, “Retrieving instance metadata”"},
}

// linkLocal is where metadata services live (every cloud's 169.254.169.254,
// OpenStack's fe80::a9fe:a9fe) and no public site does: refused whatever
// the settings, so that an allow-list such as 169.254.0.0/16 or ::/0
// cannot open a metadata service this list does not know.
var linkLocal = prefixes("169.254.0.0/16", "fe80::/10")

func mp(s string) netip.Prefix {
	a := netip.MustParseAddr(s)
	return netip.PrefixFrom(a, a.BitLen())
}

// neverScanned names what a is when no setting admits it (a cloud metadata
// or link-local address, in any spelling), or "".
func neverScanned(a netip.Addr) string {
	a = a.WithZone("").Unmap()
	if what := neverScannedAs(a); what != "" {
		return what
	}
	if a.Is6() {
		for _, v4 := range embeddedV4(a) {
			if what := neverScannedAs(v4); what != "" {
				return "an IPv6 form of " + what
			}
		}
	}
	return ""
}

const neverWords = ", which is never scanned"

func neverScannedAs(a netip.Addr) string {
	for _, m := range metadataEndpoints {
		if m.Prefix.Contains(a) {
			if inAny(a, linkLocal) {
				// "link-local" too: what the refusal of 169.254.169.254
				// has always said, and callers match on it.
				return "a cloud metadata address (link-local)" + neverWords
			}
			return "a cloud metadata address" + neverWords
		}
	}
	if inAny(a, linkLocal) {
		return "a link-local address" + neverWords
	}
	return ""
}

// onlyNeverScanned reports a prefix every address of which is never
// scanned: an allow-list entry that would admit nothing.
func onlyNeverScanned(p netip.Prefix) bool {
	if p.IsSingleIP() {
		return neverScanned(p.Addr()) != ""
	}
	for _, q := range linkLocal {
		if q.Bits() <= p.Bits() && q.Contains(p.Addr()) {
			return true
		}
	}
	return false
}
