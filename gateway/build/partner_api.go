package build

import (
	"encoding/hex"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/swaggest/jsonschema-go"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/gateway/auth"
	"github.com/fintech/platform/gateway/bind"
	"github.com/fintech/platform/gateway/clientip"
	"github.com/fintech/platform/gateway/ratelimit"
	"github.com/fintech/platform/gateway/server"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/build"
	"github.com/fintech/platform/storage/postgres"
)

// APIVersion is the partner API version of the path and the health answer.
const APIVersion = "v1"

// maxOffset bounds offset so that an OFFSET scan stays cheap: deeper pages
// are read with the answer's nextCursor (a keyset position), whose cost does
// not grow with the depth.
const maxOffset = 1_000

// RateKey is the rate-limit key of the partner class (ratelimit.KeyBy): a
// well-formed X-Build-Key on the partner JSON API is charged by its digest
// and the client address (clientip: X-Forwarded-For from a trusted proxy,
// never the proxy itself, an IPv6 client by its /64), so every key has its
// own budget at every address;
// everything else (no key, a malformed one, other routes of the class) by
// client IP. A key's budget is per address because a partner key is public
// (it sits in the widget's page): a budget shared by every address would let
// one address spend it and blank the partner's widget for everyone.
func RateKey(c *fiber.Ctx) string {
	if strings.HasPrefix(c.Path(), APIPrefix+"/") {
		if k := c.Get(HeaderKey); auth.PartnerKeys.WellFormed(k) {
			return "build-key:" + hex.EncodeToString(auth.PartnerKeys.Hash(k)[:16]) + ":" + clientip.Key(c)
		}
	}
	return clientip.Key(c)
}

// requireKey admits requests with an active partner key: missing, malformed,
// unknown or revoked → 401 key_invalid. The key is looked up by its SHA-256.
// An active key's request is also charged to the client IP. A well-formed
// key that is not active is also charged to the client IP's
// partner budget, so that guessing keys (each of which would otherwise get a
// budget of its own) is rate-limited per IP.
func (h *Handlers) requireKey(c *fiber.Ctx) error {
	raw := c.Get(HeaderKey)
	// Both already charged to the IP by RateKey. The message names the
	// header, so an integrator who forgot it knows what to send.
	if raw == "" {
		return apierr.New(http.StatusUnauthorized, apierr.CodeKeyInvalid,
			"the "+HeaderKey+" header is missing: send your partner key (qb_pk_…) in "+HeaderKey)
	}
	if !auth.PartnerKeys.WellFormed(raw) {
		return apierr.New(http.StatusUnauthorized, apierr.CodeKeyInvalid,
			"the "+HeaderKey+" header does not hold a partner key (qb_pk_ and at least 22 characters of [A-Za-z0-9_-])")
	}
	_, err := h.partnerKeys.Find(c.UserContext(), raw)
	if errors.Is(err, auth.ErrKeyUnknown) {
		if err := h.limiter.Check(c, ratelimit.Partner, "build-bad-key:"+clientip.Key(c)); err != nil {
			return err
		}
		return apierr.KeyInvalid()
	}
	if err != nil {
		return err
	}
	// Per key (RateKey) and per IP: keys are free to mint, so a client
	// holding many keys still gets one IP's budget.
	if err := h.limiter.Also(c, ratelimit.PartnerIP, clientip.Key(c)); err != nil {
		return err
	}
	return c.Next()
}

// offsetPaging is the limit and offset of an offset-paged list.
type offsetPaging struct {
	Limit  bind.Limit `query:"limit" json:"-"`
	Offset offset     `query:"offset" json:"-"`
	limit  int
	offset int
}

// offset is the number of items to skip, 0 to maxOffset.
type offset string

// PrepareJSONSchema describes an offset as the integer it is.
func (offset) PrepareJSONSchema(s *jsonschema.Schema) error {
	s.WithType(jsonschema.Integer.Type()).WithMinimum(0).WithMaximum(maxOffset).WithDefault(0).WithDescription("items to skip")
	return nil
}

// Validate reads limit (default 50, larger than 200 clamped to 200) and
// offset (default 0); anything else that is not a non-negative integer → 422.
func (p *offsetPaging) Validate() error {
	var err error
	p.limit, p.offset, err = pageParams(string(p.Limit), string(p.Offset))
	return err
}

func pageParams(limitText, offsetText string) (limit, offset int, err error) {
	var v bind.Validator
	limit = bind.DefaultLimit
	if s := limitText; s != "" {
		n, perr := strconv.Atoi(s)
		switch {
		case perr != nil && isDigits(s):
			limit = bind.MaxLimit // an integer too large for int: clamped like any large limit
		case perr != nil || n < 1:
			v.Fail("limit", "must be an integer from 1 to 200")
		default:
			limit = min(n, bind.MaxLimit)
		}
	}
	if s := offsetText; s != "" {
		n, perr := strconv.Atoi(s)
		if perr != nil || n < 0 || n > maxOffset {
			v.Fail("offset", "must be an integer from 0 to 1000; page further with cursor (the answer's nextCursor)")
		} else {
			offset = n
		}
	}
	return limit, offset, v.Err()
}

func isDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// vacancyFilter is the city and skill filter of the open vacancies.
type vacancyFilter struct {
	City  string `query:"city" json:"-" maxLength:"200" description:"exact city, case-insensitive"`
	Skill string `query:"skill" json:"-" maxLength:"100" description:"one of the vacancy's skills, case-insensitive"`
}

// filter reads the city and skill filters.
func (q vacancyFilter) filter() (build.Filter, error) {
	var v bind.Validator
	f := build.Filter{City: strings.TrimSpace(q.City), Skill: strings.TrimSpace(q.Skill)}
	text(&v, "city", f.City, bind.MaxTitle, false)
	text(&v, "skill", f.Skill, maxSkillLen, false)
	return f, v.Err()
}

// partnerListRequest is a page of open vacancies with their filter.
type partnerListRequest struct {
	offsetPaging
	vacancyFilter
	Cursor string `query:"cursor" json:"-" maxLength:"200" description:"the nextCursor of the previous page (instead of offset, and past offset 1000)"`
	f      build.Filter
	after  *schemas.Position
}

// Validate checks the page, the cursor, then the filter.
func (req *partnerListRequest) Validate() error {
	if err := req.offsetPaging.Validate(); err != nil {
		return err
	}
	if req.Cursor != "" {
		if req.offset != 0 {
			return apierr.Validation(map[string]string{"offset": "cannot be combined with cursor"})
		}
		pos, err := bind.PositionCursor(req.Cursor)
		if err != nil {
			return err
		}
		req.after = &pos
	}
	var err error
	req.f, err = req.filter()
	return err
}

// positionCursor is the opaque cursor of a vacancy's place in the newest
// first order (schemas.Position: creation time, id).
func positionCursor(v build.Vacancy) string {
	return bind.Cursor(schemas.Position{At: v.CreatedAt, ID: v.ID}.String())
}

// partnerList answers { success: true, data: { items, total, limit, offset,
// nextCursor } } of the open, unexpired vacancies matching city and skill,
// newest first. nextCursor (additive) is set while more remain, from any
// offset: past offset 1000 a partner pages on with it.
func (h *Handlers) partnerList(c *fiber.Ctx, req *partnerListRequest) error {
	var (
		vs          []build.Vacancy
		total, left int
		err         error
	)
	if req.after != nil {
		vs, total, left, err = h.store.ListOpenAfter(c.UserContext(), req.f, h.now().UTC(), *req.after, req.limit)
	} else {
		vs, total, err = h.store.ListOpen(c.UserContext(), req.f, h.now().UTC(), req.limit, req.offset)
		left = total - req.offset
	}
	if err != nil {
		return err
	}
	data := schemas.Vacancies{Items: h.vacanciesJSON(vs), Total: total, Limit: req.limit, Offset: req.offset}
	if len(vs) > 0 && left > len(vs) {
		next := positionCursor(vs[len(vs)-1])
		data.NextCursor = &next
	}
	return c.JSON(schemas.PartnerVacancies{Success: true, Data: data})
}

// partnerGet answers { success: true, data: vacancy } for an open,
// unexpired vacancy; anything else → 404 not_found.
func (h *Handlers) partnerGet(c *fiber.Ctx, req *idPath) error {
	v, err := h.store.OpenVacancy(c.UserContext(), req.id(), h.now().UTC())
	if errors.Is(err, postgres.ErrNotFound) {
		return errVacancyNotFound()
	}
	if err != nil {
		return err
	}
	return c.JSON(schemas.PartnerVacancy{Success: true, Data: h.vacancyJSON(v)})
}

// partnerHealth answers { status: "ok", apiVersion: "v1" }.
func (h *Handlers) partnerHealth(c *fiber.Ctx, _ *server.NoRequest) error {
	return c.JSON(schemas.PartnerAPIHealth{Status: "ok", APIVersion: APIVersion})
}
