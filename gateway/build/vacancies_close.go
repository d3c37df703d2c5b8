package build

import (
	"errors"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/build"
	"github.com/fintech/platform/storage/pipeline"
	"github.com/fintech/platform/storage/postgres"
)

// closeVacancy closes one of the caller's vacancies → 200 with it, queuing
// vacancy.closed in the same transaction. Closing a closed vacancy answers
// the same and queues nothing; another employer's or unknown → 404.
func (h *Handlers) closeVacancy(c *fiber.Ctx, req *idPath) error {
	id := req.id()
	now := h.now().UTC()
	v, _, err := h.store.CloseVacancy(c.UserContext(), id, caller(c), now, func(v build.Vacancy) (pipeline.OutboxRow, error) {
		return h.vacancyEvent(schemas.TypeVacancyClosed, v, now)
	})
	if errors.Is(err, postgres.ErrNotFound) {
		return errVacancyNotFound()
	}
	if err != nil {
		return err
	}
	return c.JSON(h.vacancyJSON(v))
}

// listOwnVacancies answers the caller's vacancies in every status, newest
// first, as { items, total, limit, offset }.
func (h *Handlers) listOwnVacancies(c *fiber.Ctx, req *offsetPaging) error {
	vs, total, err := h.store.ListOwned(c.UserContext(), caller(c), req.limit, req.offset)
	if err != nil {
		return err
	}
	return c.JSON(schemas.Vacancies{Items: h.vacanciesJSON(vs), Total: total, Limit: req.limit, Offset: req.offset})
}

func (h *Handlers) vacanciesJSON(vs []build.Vacancy) []schemas.Vacancy {
	out := make([]schemas.Vacancy, len(vs))
	for i, v := range vs {
		out[i] = h.vacancyJSON(v)
	}
	return out
}
