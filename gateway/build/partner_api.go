package build

import (
	"encoding/hex"
	"errors"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/gateway/bind"
	"github.com/fintech/platform/gateway/ratelimit"
	"github.com/fintech/platform/storage/build"
	"github.com/fintech/platform/storage/postgres"
)

// APIVersion is the partner API version of the path and the health answer.
const APIVersion = "v1"

// maxOffset bounds offset so that it is a cheap, valid OFFSET.
const maxOffset = 1_000_000

// RateKey is the rate-limit key of the partner class (ratelimit.KeyBy): a
// well-formed X-Build-Key on the partner JSON API is charged by its digest,
// so every key has its own budget; everything else (no key, a malformed one,
// other routes of the class) by client IP.
func RateKey(c *fiber.Ctx) string {
	if strings.HasPrefix(c.Path(), APIPrefix+"/") {
		if k := c.Get(HeaderKey); keyFormat.MatchString(k) {
			return "build-key:" + hex.EncodeToString(hashKey(k)[:16])
		}
	}
	return c.IP()
}

// requireKey admits requests with an active partner key: missing, malformed,
// unknown or revoked → 401 key_invalid. The key is looked up by its SHA-256.
// A well-formed key that is not active is also charged to the client IP's
// partner budget, so that guessing keys (each of which would otherwise get a
// budget of its own) is rate-limited per IP.
func (h *Handlers) requireKey(c *fiber.Ctx) error {
	raw := c.Get(HeaderKey)
	if !keyFormat.MatchString(raw) {
		return apierr.KeyInvalid() // already charged to the IP by RateKey
	}
	_, err := h.store.KeyByHash(c.UserContext(), hashKey(raw))
	if errors.Is(err, postgres.ErrNotFound) {
		if err := h.limiter.Check(c, ratelimit.Partner, "build-bad-key:"+c.IP()); err != nil {
			return err
		}
		return apierr.KeyInvalid()
	}
	if err != nil {
		return err
	}
	return c.Next()
}

// pageParams reads limit (default 50, larger than 200 clamped to 200) and
// offset (default 0); anything else that is not a non-negative integer → 422.
func pageParams(c *fiber.Ctx) (limit, offset int, err error) {
	var v bind.Validator
	limit = bind.DefaultLimit
	if s := c.Query("limit"); s != "" {
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
	if s := c.Query("offset"); s != "" {
		n, perr := strconv.Atoi(s)
		if perr != nil || n < 0 || n > maxOffset {
			v.Fail("offset", "must be an integer from 0 to 1000000")
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

// filterParams reads the city and skill filters.
func filterParams(c *fiber.Ctx) (build.Filter, error) {
	var v bind.Validator
	f := build.Filter{City: strings.TrimSpace(c.Query("city")), Skill: strings.TrimSpace(c.Query("skill"))}
	text(&v, "city", f.City, bind.MaxTitle, false)
	text(&v, "skill", f.Skill, maxSkillLen, false)
	return f, v.Err()
}

type envelope struct {
	Success bool `json:"success"`
	Data    any  `json:"data"`
}

type listData struct {
	Items  []vacancyJSON `json:"items"`
	Total  int           `json:"total"`
	Limit  int           `json:"limit"`
	Offset int           `json:"offset"`
}

// partnerList answers { success: true, data: { items, total, limit, offset } }
// of the open, unexpired vacancies matching city and skill, newest first.
func (h *Handlers) partnerList(c *fiber.Ctx) error {
	limit, offset, err := pageParams(c)
	if err != nil {
		return err
	}
	f, err := filterParams(c)
	if err != nil {
		return err
	}
	vs, total, err := h.store.ListOpen(c.UserContext(), f, h.now().UTC(), limit, offset)
	if err != nil {
		return err
	}
	return c.JSON(envelope{Success: true, Data: listData{Items: h.vacanciesJSON(vs), Total: total, Limit: limit, Offset: offset}})
}

// partnerGet answers { success: true, data: vacancy } for an open,
// unexpired vacancy; anything else → 404 not_found.
func (h *Handlers) partnerGet(c *fiber.Ctx) error {
	v, err := h.store.OpenVacancy(c.UserContext(), pathID(c), h.now().UTC())
	if errors.Is(err, postgres.ErrNotFound) {
		return errVacancyNotFound()
	}
	if err != nil {
		return err
	}
	return c.JSON(envelope{Success: true, Data: h.vacancyJSON(v)})
}

// partnerHealth answers { status: "ok", apiVersion: "v1" }.
func (h *Handlers) partnerHealth(c *fiber.Ctx) error {
	return c.JSON(fiber.Map{"status": "ok", "apiVersion": APIVersion})
}
