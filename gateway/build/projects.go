package build

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/bind"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/build"
)

// createProjectRequest is the body of POST /projects.
type createProjectRequest struct {
	Name        string `json:"name" required:"true" maxLength:"200"`
	Description string `json:"description" maxLength:"20000"`
	City        string `json:"city" maxLength:"200"`
	URL         string `json:"url" maxLength:"2000" description:"an absolute http or https URL"`
}

func (h *Handlers) projectJSON(p build.Project) schemas.BuildProject {
	return schemas.BuildProject{ID: p.ID, Name: p.Name, Description: p.Description, City: p.City, URL: p.URL,
		PageURL: h.cfg.PublicBaseURL + PagePrefix + "/projects/" + p.ID, CreatedAt: rfc3339(p.CreatedAt)}
}

// httpURL reports whether s is an absolute http(s) URL with a host: the only
// links the module stores or renders (never javascript: or data:).
func httpURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && u.User == nil
}

func (req createProjectRequest) validate() (build.Project, error) {
	var v bind.Validator
	p := build.Project{Name: strings.TrimSpace(req.Name), Description: strings.TrimSpace(req.Description),
		City: strings.TrimSpace(req.City), URL: strings.TrimSpace(req.URL)}
	// name, description, city and url's presence and lengths are bound by their tags.
	if p.URL != "" {
		v.Check(httpURL(p.URL), "url", "must be an absolute http or https URL")
	}
	return p, v.Err()
}

// createProject answers 201 with the new project.
func (h *Handlers) createProject(c *fiber.Ctx, req *createProjectRequest) error {
	p, err := req.validate()
	if err != nil {
		return err
	}
	p.ID, p.EmployerID, p.CreatedAt = schemas.NewID(), caller(c), h.now().UTC()
	if err := h.store.CreateProject(c.UserContext(), p); err != nil {
		return err
	}
	return c.Status(http.StatusCreated).JSON(h.projectJSON(p))
}

// listProjects answers a page of the caller's projects, newest first, as
// { items, limit, offset }.
func (h *Handlers) listProjects(c *fiber.Ctx, req *offsetPaging) error {
	ps, err := h.store.ListProjects(c.UserContext(), caller(c), req.limit, req.offset)
	if err != nil {
		return err
	}
	items := make([]schemas.BuildProject, len(ps))
	for i, p := range ps {
		items[i] = h.projectJSON(p)
	}
	return c.JSON(schemas.BuildProjects{Items: items, Limit: req.limit, Offset: req.offset})
}
