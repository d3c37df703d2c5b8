package build

import (
	"encoding/xml"
	"html"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/swaggest/jsonschema-go"

	"github.com/fintech/platform/gateway/apierr"
)

// rssMax is how many vacancies the RSS feed carries.
const rssMax = 100

type rssDoc struct {
	XMLName xml.Name   `xml:"rss"`
	Version string     `xml:"version,attr"`
	Atom    string     `xml:"xmlns:atom,attr"`
	Channel rssChannel `xml:"channel"`
}

type rssChannel struct {
	Title         string    `xml:"title"`
	Link          string    `xml:"link"`
	Description   string    `xml:"description"`
	Language      string    `xml:"language"`
	LastBuildDate string    `xml:"lastBuildDate"`
	TTL           int       `xml:"ttl"`
	Self          atomLink  `xml:"atom:link"`
	Items         []rssItem `xml:"item"`
}

type atomLink struct {
	Href string `xml:"href,attr"`
	Rel  string `xml:"rel,attr"`
	Type string `xml:"type,attr"`
}

type rssItem struct {
	Title       string   `xml:"title"`
	Link        string   `xml:"link"`
	Description string   `xml:"description"`
	GUID        rssGUID  `xml:"guid"`
	PubDate     string   `xml:"pubDate"`
	Categories  []string `xml:"category"`
}

type rssGUID struct {
	IsPermaLink bool   `xml:"isPermaLink,attr"`
	Value       string `xml:",chardata"`
}

// rssText prepares untrusted text for an RSS element. Readers treat title
// and description as entity-encoded HTML, so the text is HTML-escaped first
// (and then XML-escaped by the encoder): a reader shows "<script>" as text
// and never runs it.
func rssText(s string) string { return html.EscapeString(s) }

// rss is the RSS 2.0 feed of the newest open vacancies, filtered like the
// partner API by city and skill; built from current data on every request.
func (h *Handlers) rss(c *fiber.Ctx, req *vacancyFilter) error {
	f, err := req.filter()
	if err != nil {
		return err
	}
	now := h.now().UTC()
	vs, _, err := h.store.ListOpen(c.UserContext(), f, now, rssMax, 0)
	if err != nil {
		return err
	}
	self := h.cfg.PublicBaseURL + PublicPrefix + "/rss/vacancies.xml"
	q := url.Values{}
	if f.City != "" {
		q.Set("city", f.City)
	}
	if f.Skill != "" {
		q.Set("skill", f.Skill)
	}
	if len(q) > 0 {
		self += "?" + q.Encode()
	}
	doc := rssDoc{Version: "2.0", Atom: "http://www.w3.org/2005/Atom", Channel: rssChannel{
		Title: "Open vacancies", Link: h.cfg.PublicBaseURL + PagePrefix + "/vacancies",
		Description: "Open vacancies, newest first", Language: "en", LastBuildDate: now.Format(time.RFC1123Z), TTL: 15,
		Self: atomLink{Href: self, Rel: "self", Type: "application/rss+xml"},
	}}
	for _, v := range vs {
		item := rssItem{
			Title: rssText(v.Title), Link: h.vacancyURL(v.ID),
			Description: rssText(v.City + " · " + formatMinor(v.Salary, v.SalaryCurrency) + "\n\n" + v.Description),
			GUID:        rssGUID{IsPermaLink: true, Value: h.vacancyURL(v.ID)},
			PubDate:     v.CreatedAt.UTC().Format(time.RFC1123Z),
		}
		for _, s := range v.Skills {
			item.Categories = append(item.Categories, rssText(s))
		}
		doc.Channel.Items = append(doc.Channel.Items, item)
	}
	return sendXML(c, "application/rss+xml; charset=utf-8", doc)
}

func sendXML(c *fiber.Ctx, contentType string, doc any) error {
	out, err := xml.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, contentType)
	c.Set(fiber.HeaderCacheControl, "no-cache")
	c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
	return c.Send(append([]byte(xml.Header), out...))
}

// SitemapNS is the sitemaps.org namespace.
const SitemapNS = "http://www.sitemaps.org/schemas/sitemap/0.9"

type urlSet struct {
	XMLName xml.Name     `xml:"urlset"`
	NS      string       `xml:"xmlns,attr"`
	URLs    []sitemapURL `xml:"url"`
}

type sitemapURL struct {
	Loc     string `xml:"loc"`
	LastMod string `xml:"lastmod,omitempty"`
}

type sitemapIndex struct {
	XMLName  xml.Name     `xml:"sitemapindex"`
	NS       string       `xml:"xmlns,attr"`
	Sitemaps []sitemapURL `xml:"sitemap"`
}

// sitemapRequest is the page of a sitemap index.
type sitemapRequest struct {
	Page sitemapPage `query:"page" json:"-"`
}

// sitemapPage is a page of a sitemap index, from 1; any other value names
// no page (404).
type sitemapPage string

// PrepareJSONSchema describes a sitemap page as the integer it is.
func (sitemapPage) PrepareJSONSchema(s *jsonschema.Schema) error {
	s.WithType(jsonschema.Integer.Type()).WithDescription("page of a sitemap index, from 1; anything else is 404")
	return nil
}

// sitemapURLs lists every URL the sitemap names: product pages, open
// vacancies (newest first), projects with open vacancies, top employers.
// sitemapCache is the last sitemap built, with the change version of the
// vacancies it reflects and the first time one of them expires: it answers
// while both hold, so the sitemap is current on every request (decisions.md)
// without a walk of every open vacancy per request.
type sitemapCache struct {
	mu      sync.Mutex
	built   bool
	version int64
	until   time.Time // zero: no open vacancy expires
	urls    []sitemapURL
}

// sitemapURLs answers the cached URLs while the vacancies have not changed
// and none expired, else builds them again.
func (h *Handlers) sitemapURLs(c *fiber.Ctx, now time.Time) ([]sitemapURL, error) {
	version, until, err := h.store.SitemapStamp(c.UserContext(), now)
	if err != nil {
		return nil, err
	}
	sc := &h.sitemapCache
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if sc.built && sc.version == version && (sc.until.IsZero() || now.Before(sc.until)) && until.Equal(sc.until) {
		return sc.urls, nil
	}
	urls, err := h.buildSitemapURLs(c, now)
	if err != nil {
		return nil, err
	}
	sc.built, sc.version, sc.until, sc.urls = true, version, until, urls
	return urls, nil
}

func (h *Handlers) buildSitemapURLs(c *fiber.Ctx, now time.Time) ([]sitemapURL, error) {
	entries, err := h.store.SitemapEntries(c.UserContext(), now, h.cfg.TopEmployers)
	if err != nil {
		return nil, err
	}
	urls := make([]sitemapURL, 0, len(h.cfg.ProductPages)+len(entries))
	for _, p := range h.cfg.ProductPages {
		urls = append(urls, sitemapURL{Loc: h.cfg.PublicBaseURL + p})
	}
	for _, e := range entries {
		var path string
		switch e.Kind {
		case "vacancy":
			path = "/vacancies/"
		case "project":
			path = "/projects/"
		default:
			path = "/employers/"
		}
		urls = append(urls, sitemapURL{Loc: h.cfg.PublicBaseURL + PagePrefix + path + e.ID, LastMod: rfc3339(e.LastMod)})
	}
	return urls, nil
}

// sitemap answers /sitemap.xml from current data: one urlset of at most
// SitemapMax URLs, or, when there are more, a sitemap index of
// /sitemap.xml?page=1..N, each page a urlset of at most SitemapMax URLs.
func (h *Handlers) sitemap(c *fiber.Ctx, req *sitemapRequest) error {
	now := h.now().UTC()
	urls, err := h.sitemapURLs(c, now)
	if err != nil {
		return err
	}
	const ct = "application/xml; charset=utf-8"
	max := h.cfg.SitemapMax
	pages := (len(urls) + max - 1) / max
	if s := string(req.Page); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > pages || pages <= 1 || strings.TrimSpace(s) != s {
			return apierr.New(http.StatusNotFound, apierr.CodeNotFound, "no such sitemap page")
		}
		return sendXML(c, ct, urlSet{NS: SitemapNS, URLs: urls[(n-1)*max : min(n*max, len(urls))]})
	}
	if len(urls) <= max {
		return sendXML(c, ct, urlSet{NS: SitemapNS, URLs: urls})
	}
	idx := sitemapIndex{NS: SitemapNS}
	for i := 1; i <= pages; i++ {
		idx.Sitemaps = append(idx.Sitemaps, sitemapURL{Loc: h.cfg.PublicBaseURL + SitemapPath + "?page=" + strconv.Itoa(i), LastMod: rfc3339(now)})
	}
	return sendXML(c, ct, idx)
}
