import { h } from "/assets/vendor-3b04f2.js";

// Every page's content exists only here: the server sends an empty #root.
const pages = {
  "/": ["Plan projects with your whole team", "Trellis keeps roadmaps, sprints and dependencies on one board, so that everyone sees the same plan and what changed since yesterday."],
  "/features": ["Features", "Roadmaps that link to the work, sprint boards, dependency graphs that warn before a slip spreads, and weekly reports written for you."],
  "/pricing": ["Pricing", "Free for up to five people. Team is £8 per person a month; Business adds single sign-on, audit logs and a service agreement."],
  "/integrations": ["Integrations", "Link issues from GitHub and GitLab, post updates to Slack, and embed Figma frames in any card."],
  "/customers": ["Customers", "Product teams from twelve-person start-ups to public broadcasters plan their quarters in Trellis."],
  "/security": ["Security", "Data is encrypted in transit and at rest, hosted in the EU, and every change is written to an audit log you can export."],
  "/changelog": ["Changelog", "This week: dependency warnings in the sprint view, faster search, and a dark theme that follows your system setting."],
};

const path = location.pathname.replace(/\/$/, "") || "/";
const [title, lead] = pages[path] || ["Page not found", "There is nothing at this address."];
document.getElementById("root").append(
  h("header", {}, h("nav", {}, ...Object.keys(pages).map((p) => h("a", { href: p }, p === "/" ? "Trellis" : p.slice(1))))),
  h("main", {}, h("h1", {}, title), h("p", {}, lead)),
  h("footer", {}, "© 2026 Trellis Labs"),
);
