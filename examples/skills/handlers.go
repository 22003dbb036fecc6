package skills

import (
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/singletable-go/singletable"
)

// DateLayout is the JSON form of last_used_date and used_since.
const DateLayout = "2006-01-02"

// maxBody bounds request bodies; every valid body is far smaller.
const maxBody = 64 << 10

// Handler returns the HTTP API of the service:
//
//	POST   /users                                     register (AP2)
//	GET    /users?limit=&cursor=                      list users, no Scan (AP5)
//	GET    /users/{username}[?include=skills]         get user (AP1), with skills (AP13)
//	HEAD   /users/{username}                          exists check (AP4)
//	GET    /users/{username}/exists                   exists check (AP4)
//	PATCH  /users/{username}                          update profile (AP3)
//	POST   /login                                     authenticate (AP1)
//	POST   /users/{username}/skills                   add skill (AP8)
//	GET    /users/{username}/skills?limit=&cursor=    list skills (AP6)
//	GET    /users/{username}/skills/{skillName}       get skill (AP7)
//	PUT    /users/{username}/skills/{skillName}       update skill (AP9)
//	DELETE /users/{username}/skills/{skillName}       remove skill (AP10)
//	POST   /users/{username}/skills/{skillName}/endorsements   endorse
//	GET    /skills/{skillName}/users?level=&min_years=&years=&used_since=&limit=&cursor=
//	                                                  users by skill (AP11, AP12, GSI2)
//
// Bodies and answers are JSON. Bad input is 400, an unknown user or skill
// 404, a duplicate 409, bad credentials 401.
func Handler(s *Service, log *slog.Logger) http.Handler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	h := &handlers{s: s, log: log}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /users", h.register)
	mux.HandleFunc("GET /users", h.listUsers)
	mux.HandleFunc("GET /users/{username}", h.getUser)
	mux.HandleFunc("HEAD /users/{username}", h.headUser)
	mux.HandleFunc("GET /users/{username}/exists", h.userExists)
	mux.HandleFunc("PATCH /users/{username}", h.updateProfile)
	mux.HandleFunc("POST /login", h.login)
	mux.HandleFunc("POST /users/{username}/skills", h.addSkill)
	mux.HandleFunc("GET /users/{username}/skills", h.listSkills)
	mux.HandleFunc("GET /users/{username}/skills/{skillName}", h.getSkill)
	mux.HandleFunc("PUT /users/{username}/skills/{skillName}", h.updateSkill)
	mux.HandleFunc("DELETE /users/{username}/skills/{skillName}", h.deleteSkill)
	mux.HandleFunc("POST /users/{username}/skills/{skillName}/endorsements", h.endorse)
	mux.HandleFunc("GET /skills/{skillName}/users", h.usersBySkill)
	return mux
}

type handlers struct {
	s   *Service
	log *slog.Logger
}

// UserJSON is a user as the API shows it (never the password hash).
type UserJSON struct {
	Username  string      `json:"username"`
	Name      string      `json:"name"`
	CreatedAt time.Time   `json:"created_at"`
	UpdatedAt time.Time   `json:"updated_at"`
	Skills    []SkillJSON `json:"skills,omitempty"`
}

// SkillJSON is a skill as the API shows it.
type SkillJSON struct {
	Username     string    `json:"username"`
	SkillName    string    `json:"skill_name"`
	Level        string    `json:"level"`
	Years        int       `json:"years_of_experience"`
	Endorsements int       `json:"endorsements"`
	LastUsed     string    `json:"last_used_date,omitempty"` // absent when the item has no LastUsedDate
	CreatedAt    time.Time `json:"created_at"`
	UpdatedAt    time.Time `json:"updated_at"`
}

// PageJSON is one page of a list; Cursor is absent on the last page.
type PageJSON[T any] struct {
	Items  []T    `json:"items"`
	Cursor string `json:"cursor,omitempty"`
}

// ErrorJSON is the body of every error answer.
type ErrorJSON struct {
	Error string `json:"error"`
}

func userJSON(u User) UserJSON {
	return UserJSON{Username: u.Username, Name: u.Name, CreatedAt: u.CreatedAt, UpdatedAt: u.UpdatedAt}
}

func skillJSON(s UserSkill) SkillJSON {
	j := SkillJSON{Username: s.Username, SkillName: s.SkillName, Level: s.Level, Years: s.Years,
		Endorsements: s.Endorsements, CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt}
	if !s.LastUsed.IsZero() {
		j.LastUsed = s.LastUsed.UTC().Format(DateLayout)
	}
	return j
}

func mapSlice[T, U any](in []T, f func(T) U) []U {
	out := make([]U, 0, len(in))
	for _, v := range in {
		out = append(out, f(v))
	}
	return out
}

func (h *handlers) writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if err := json.NewEncoder(w).Encode(v); err != nil {
		h.log.Warn("write response", "err", err)
	}
}

// fail maps an error to its status: input and key errors, bad cursors 400;
// not found 404; already exists 409; bad credentials 401; anything else 500
// (logged, and not shown to the client).
func (h *handlers) fail(w http.ResponseWriter, r *http.Request, err error) {
	var in *InputError
	var ve *singletable.ValidationError
	var ke *singletable.KeyError
	status := http.StatusInternalServerError
	switch {
	case errors.As(err, &in), errors.As(err, &ve), errors.As(err, &ke), errors.Is(err, singletable.ErrInvalidCursor):
		status = http.StatusBadRequest
	case errors.Is(err, singletable.ErrNotFound):
		status = http.StatusNotFound
	case errors.Is(err, singletable.ErrAlreadyExists):
		status = http.StatusConflict
	case errors.Is(err, ErrBadCredentials):
		status = http.StatusUnauthorized
	}
	msg := err.Error()
	if status == http.StatusInternalServerError {
		h.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
		msg = "internal error"
	}
	h.writeJSON(w, status, ErrorJSON{Error: msg})
}

// decode reads a JSON body into v, refusing unknown fields and trailing data.
func decode(r *http.Request, v any) error {
	dec := json.NewDecoder(io.LimitReader(r.Body, maxBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return &InputError{"body", "invalid JSON: " + err.Error()}
	}
	if dec.More() {
		return &InputError{"body", "trailing data after the JSON object"}
	}
	return nil
}

func queryInt(r *http.Request, name string) (*int, error) {
	s := r.URL.Query().Get(name)
	if s == "" {
		return nil, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return nil, &InputError{name, "must be an integer"}
	}
	return &n, nil
}

func pageParams(r *http.Request) (int, string, error) {
	n, err := queryInt(r, "limit")
	if err != nil {
		return 0, "", err
	}
	limit := 0
	if n != nil {
		if *n <= 0 {
			return 0, "", &InputError{"limit", "must be positive"}
		}
		limit = *n
	}
	return limit, r.URL.Query().Get("cursor"), nil
}

func parseDate(field, s string) (*time.Time, error) {
	if s == "" {
		return nil, nil
	}
	t, err := time.Parse(DateLayout, s)
	if err != nil {
		return nil, &InputError{field, "must be a date YYYY-MM-DD"}
	}
	return &t, nil
}

type registerRequest struct {
	Username string `json:"username"`
	Name     string `json:"name"`
	Password string `json:"password"`
}

func (h *handlers) register(w http.ResponseWriter, r *http.Request) {
	var req registerRequest
	if err := decode(r, &req); err != nil {
		h.fail(w, r, err)
		return
	}
	u, err := h.s.Register(r.Context(), req.Username, req.Name, req.Password)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	w.Header().Set("Location", "/users/"+u.Username)
	h.writeJSON(w, http.StatusCreated, userJSON(u))
}

func (h *handlers) listUsers(w http.ResponseWriter, r *http.Request) {
	limit, cursor, err := pageParams(r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	page, err := h.s.ListUsers(r.Context(), limit, cursor)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.writeJSON(w, http.StatusOK, PageJSON[UserJSON]{Items: mapSlice(page.Items, userJSON), Cursor: page.Cursor})
}

func (h *handlers) getUser(w http.ResponseWriter, r *http.Request) {
	username := r.PathValue("username")
	switch inc := r.URL.Query().Get("include"); inc {
	case "":
		u, err := h.s.GetUser(r.Context(), username)
		if err != nil {
			h.fail(w, r, err)
			return
		}
		h.writeJSON(w, http.StatusOK, userJSON(u))
	case "skills":
		p, err := h.s.GetProfile(r.Context(), username)
		if err != nil {
			h.fail(w, r, err)
			return
		}
		out := userJSON(p.User)
		out.Skills = mapSlice(p.Skills, skillJSON)
		h.writeJSON(w, http.StatusOK, out)
	default:
		h.fail(w, r, &InputError{"include", "the only value is skills"})
	}
}

func (h *handlers) headUser(w http.ResponseWriter, r *http.Request) {
	ok, err := h.s.UserExists(r.Context(), r.PathValue("username"))
	var in *InputError
	switch {
	case errors.As(err, &in):
		w.WriteHeader(http.StatusBadRequest)
	case err != nil:
		h.log.Error("exists", "err", err)
		w.WriteHeader(http.StatusInternalServerError)
	case ok:
		w.WriteHeader(http.StatusOK)
	default:
		w.WriteHeader(http.StatusNotFound)
	}
}

func (h *handlers) userExists(w http.ResponseWriter, r *http.Request) {
	ok, err := h.s.UserExists(r.Context(), r.PathValue("username"))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.writeJSON(w, http.StatusOK, map[string]bool{"exists": ok})
}

type profileRequest struct {
	Name string `json:"name"`
}

func (h *handlers) updateProfile(w http.ResponseWriter, r *http.Request) {
	var req profileRequest
	if err := decode(r, &req); err != nil {
		h.fail(w, r, err)
		return
	}
	u, err := h.s.UpdateProfile(r.Context(), r.PathValue("username"), req.Name)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.writeJSON(w, http.StatusOK, userJSON(u))
}

type loginRequest struct {
	Username string `json:"username"`
	Password string `json:"password"`
}

func (h *handlers) login(w http.ResponseWriter, r *http.Request) {
	var req loginRequest
	if err := decode(r, &req); err != nil {
		h.fail(w, r, err)
		return
	}
	u, err := h.s.Authenticate(r.Context(), req.Username, req.Password)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.writeJSON(w, http.StatusOK, userJSON(u))
}

// skillRequest is the body of POST and PUT on skills; absent fields are nil.
type skillRequest struct {
	SkillName *string `json:"skill_name"`
	Level     *string `json:"level"`
	Years     *int    `json:"years_of_experience"`
	LastUsed  *string `json:"last_used_date"`
}

func (req skillRequest) input() (SkillInput, error) {
	in := SkillInput{Level: req.Level, Years: req.Years}
	if req.LastUsed != nil {
		t, err := parseDate("last_used_date", *req.LastUsed)
		if err != nil {
			return in, err
		}
		if t == nil {
			return in, &InputError{"last_used_date", "must be a date YYYY-MM-DD"}
		}
		in.LastUsed = t
	}
	return in, nil
}

func (h *handlers) addSkill(w http.ResponseWriter, r *http.Request) {
	var req skillRequest
	if err := decode(r, &req); err != nil {
		h.fail(w, r, err)
		return
	}
	if req.SkillName == nil {
		h.fail(w, r, &InputError{"skill_name", "is required"})
		return
	}
	in, err := req.input()
	if err != nil {
		h.fail(w, r, err)
		return
	}
	sk, err := h.s.AddSkill(r.Context(), r.PathValue("username"), *req.SkillName, in)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	w.Header().Set("Location", "/users/"+sk.Username+"/skills/"+pathEscape(sk.SkillName))
	h.writeJSON(w, http.StatusCreated, skillJSON(sk))
}

func (h *handlers) listSkills(w http.ResponseWriter, r *http.Request) {
	limit, cursor, err := pageParams(r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	page, err := h.s.ListSkills(r.Context(), r.PathValue("username"), limit, cursor)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.writeJSON(w, http.StatusOK, PageJSON[SkillJSON]{Items: mapSlice(page.Items, skillJSON), Cursor: page.Cursor})
}

func (h *handlers) getSkill(w http.ResponseWriter, r *http.Request) {
	sk, err := h.s.GetSkill(r.Context(), r.PathValue("username"), r.PathValue("skillName"))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.writeJSON(w, http.StatusOK, skillJSON(sk))
}

func (h *handlers) updateSkill(w http.ResponseWriter, r *http.Request) {
	var req skillRequest
	if err := decode(r, &req); err != nil {
		h.fail(w, r, err)
		return
	}
	if req.SkillName != nil {
		h.fail(w, r, &InputError{"skill_name", "is the resource's name: delete the skill and add it under the new name"})
		return
	}
	in, err := req.input()
	if err != nil {
		h.fail(w, r, err)
		return
	}
	sk, err := h.s.UpdateSkill(r.Context(), r.PathValue("username"), r.PathValue("skillName"), in)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.writeJSON(w, http.StatusOK, skillJSON(sk))
}

func (h *handlers) deleteSkill(w http.ResponseWriter, r *http.Request) {
	if _, err := h.s.RemoveSkill(r.Context(), r.PathValue("username"), r.PathValue("skillName")); err != nil {
		h.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (h *handlers) endorse(w http.ResponseWriter, r *http.Request) {
	sk, err := h.s.Endorse(r.Context(), r.PathValue("username"), r.PathValue("skillName"))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.writeJSON(w, http.StatusOK, skillJSON(sk))
}

func (h *handlers) usersBySkill(w http.ResponseWriter, r *http.Request) {
	limit, cursor, err := pageParams(r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	q := r.URL.Query()
	in := SkillSearch{SkillName: r.PathValue("skillName"), Level: q.Get("level"), Limit: limit, Cursor: cursor}
	if in.MinYears, err = queryInt(r, "min_years"); err == nil {
		if in.Years, err = queryInt(r, "years"); err == nil {
			in.UsedSince, err = parseDate("used_since", q.Get("used_since"))
		}
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	page, err := h.s.FindUsers(r.Context(), in)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.writeJSON(w, http.StatusOK, PageJSON[SkillJSON]{Items: mapSlice(page.Items, skillJSON), Cursor: page.Cursor})
}

// pathEscape escapes a skill name for a URL path segment ("c#" → "c%23").
func pathEscape(s string) string { return url.PathEscape(s) }
