/* expr.c - compiles expressions to a flat postfix program and evaluates it.
 *
 * The parser is recursive descent, one function per precedence level, and
 * emits postfix ops as it goes. Every finished sub-expression that uses only
 * constants is evaluated on the spot and replaced by one constant op, so a
 * constant expression ends as a single op and `cfl * min(spacing[0], ...)`
 * costs nothing per step. `and`/`or` short-circuit with a forward jump, so a
 * hook on their right is not called when the left side decides. The stack
 * depth is tracked while emitting, which is what lets evaluation use a small
 * fixed array and no checks.
 */
#include "expr.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Both the evaluation stack and the parser's recursion stop here. */
#define EXPR_MAX_DEPTH 64
#define EXPR_MAX_HOOK_ARGS 8

typedef enum op_code {
  OP_CONST, /* push value */
  OP_STEP,  /* push ctx->n */
  OP_VAR,   /* push ctx->vars[arg] */
  OP_HOOK,  /* pop nargs, push call_hook(arg, args) */
  OP_NEG,
  OP_NOT,
  OP_BOOL, /* top -> 1 or 0 */
  OP_ADD,
  OP_SUB,
  OP_MUL,
  OP_DIV,
  OP_IDIV,
  OP_MOD,
  OP_POW,
  OP_EQ,
  OP_NE,
  OP_LT,
  OP_LE,
  OP_GT,
  OP_GE,
  OP_AND_JUMP, /* top == 0: top = 0, skip arg ops; else pop */
  OP_OR_JUMP,  /* top != 0: top = 1, skip arg ops; else pop */
  OP_MIN,
  OP_MAX,
  OP_ATAN2,
  OP_FLOOR,
  OP_CEIL,
  OP_ROUND,
  OP_ABS,
  OP_SQRT,
  OP_EXP,
  OP_LOG,
  OP_SIN,
  OP_COS,
  OP_TAN,
} op_code;

typedef struct expr_op {
  short code;
  short nargs; /* OP_HOOK */
  int arg;     /* OP_VAR slot, OP_HOOK id, jump distance */
  double value;
} expr_op;

struct gf_expr {
  char *text;
  int is_constant;
  int calls_hook;
  int count;
  expr_op ops[];
};

/* Built-in functions; min and max take any number of arguments and compile
 * to a chain of two-argument ops. */
typedef struct builtin {
  const char *name;
  op_code code;
  int min_args, max_args; /* max_args 0: no limit */
} builtin;

static const builtin builtins[] = {
    {"min", OP_MIN, 1, 0},   {"max", OP_MAX, 1, 0},     {"floor", OP_FLOOR, 1, 1},
    {"ceil", OP_CEIL, 1, 1}, {"round", OP_ROUND, 1, 1}, {"abs", OP_ABS, 1, 1},
    {"sqrt", OP_SQRT, 1, 1}, {"exp", OP_EXP, 1, 1},     {"log", OP_LOG, 1, 1},
    {"sin", OP_SIN, 1, 1},   {"cos", OP_COS, 1, 1},     {"tan", OP_TAN, 1, 1},
    {"pow", OP_POW, 2, 2},   {"atan2", OP_ATAN2, 2, 2},
};

static const double expr_pi = 3.14159265358979323846;

/* ---- evaluation ---------------------------------------------------------- */

/* Floored modulo as in Lua: the result takes the sign of the divisor. */
static double floored_mod(double a, double b) {
  double m = fmod(a, b);
  if (m != 0 && (m < 0) != (b < 0)) m += b;
  return m;
}

/* Runs `count` ops. The compiler guarantees the stack never exceeds
 * EXPR_MAX_DEPTH, so there are no bounds checks here. */
static double run(const expr_op *ops, int count, const gf_eval_ctx *ctx, gf_status *status) {
  double stack[EXPR_MAX_DEPTH];
  int sp = 0;
/* The top of the stack; for binary ops LEFT op RIGHT after the pop. */
#define TOP stack[sp - 1]
#define LEFT stack[sp - 1]
#define RIGHT stack[sp]
  for (int pc = 0; pc < count; pc++) {
    const expr_op *op = &ops[pc];
    switch ((op_code)op->code) {
      case OP_CONST:
        stack[sp++] = op->value;
        break;
      case OP_STEP:
        stack[sp++] = ctx->n;
        break;
      case OP_VAR:
        stack[sp++] = ctx->vars[op->arg];
        break;
      case OP_HOOK: {
        gf_status hook_status = GF_OK;
        double result = 0;
        sp -= op->nargs;
        if (ctx->call_hook)
          result = ctx->call_hook(ctx->user, op->arg, &stack[sp], op->nargs, &hook_status);
        else
          hook_status = GF_INTERNAL; /* the caller did not wire up hooks */
        if (hook_status != GF_OK) {
          if (status) *status = hook_status;
          return 0;
        }
        stack[sp++] = result;
        break;
      }
      case OP_NEG:
        TOP = -TOP;
        break;
      case OP_NOT:
        TOP = TOP == 0;
        break;
      case OP_BOOL:
        TOP = TOP != 0;
        break;
      case OP_ADD:
        sp--, LEFT += RIGHT;
        break;
      case OP_SUB:
        sp--, LEFT -= RIGHT;
        break;
      case OP_MUL:
        sp--, LEFT *= RIGHT;
        break;
      case OP_DIV:
        sp--, LEFT /= RIGHT;
        break;
      case OP_IDIV:
        sp--, LEFT = floor(LEFT / RIGHT);
        break;
      case OP_MOD:
        sp--, LEFT = floored_mod(LEFT, RIGHT);
        break;
      case OP_POW:
        sp--, LEFT = pow(LEFT, RIGHT);
        break;
      case OP_EQ:
        sp--, LEFT = LEFT == RIGHT;
        break;
      case OP_NE:
        sp--, LEFT = LEFT != RIGHT;
        break;
      case OP_LT:
        sp--, LEFT = LEFT < RIGHT;
        break;
      case OP_LE:
        sp--, LEFT = LEFT <= RIGHT;
        break;
      case OP_GT:
        sp--, LEFT = LEFT > RIGHT;
        break;
      case OP_GE:
        sp--, LEFT = LEFT >= RIGHT;
        break;
      case OP_AND_JUMP:
        if (TOP == 0) {
          TOP = 0; /* -0 becomes 0 */
          pc += op->arg;
        } else {
          sp--;
        }
        break;
      case OP_OR_JUMP:
        if (TOP != 0) {
          TOP = 1;
          pc += op->arg;
        } else {
          sp--;
        }
        break;
      /* Unlike fmin, a NaN argument gives NaN: a bad value must not vanish. */
      case OP_MIN:
        sp--, LEFT = (LEFT <= RIGHT || isnan(LEFT)) ? LEFT : RIGHT;
        break;
      case OP_MAX:
        sp--, LEFT = (LEFT >= RIGHT || isnan(LEFT)) ? LEFT : RIGHT;
        break;
      case OP_ATAN2:
        sp--, LEFT = atan2(LEFT, RIGHT);
        break;
      case OP_FLOOR:
        TOP = floor(TOP);
        break;
      case OP_CEIL:
        TOP = ceil(TOP);
        break;
      case OP_ROUND:
        TOP = round(TOP);
        break; /* halves away from zero */
      case OP_ABS:
        TOP = fabs(TOP);
        break;
      case OP_SQRT:
        TOP = sqrt(TOP);
        break;
      case OP_EXP:
        TOP = exp(TOP);
        break;
      case OP_LOG:
        TOP = log(TOP);
        break;
      case OP_SIN:
        TOP = sin(TOP);
        break;
      case OP_COS:
        TOP = cos(TOP);
        break;
      case OP_TAN:
        TOP = tan(TOP);
        break;
    }
  }
#undef TOP
#undef LEFT
#undef RIGHT
  return stack[0];
}

double gf_expr_eval(const gf_expr *expr, const gf_eval_ctx *ctx, gf_status *status) {
  if (expr->is_constant) return expr->ops[0].value;
  if (!ctx) {
    if (status) *status = GF_INTERNAL; /* a per-step expression needs n, vars and hooks */
    return 0;
  }
  return run(expr->ops, expr->count, ctx, status);
}

int gf_expr_is_constant(const gf_expr *expr) {
  return expr->is_constant;
}
int gf_expr_calls_hook(const gf_expr *expr) {
  return expr->calls_hook;
}
int gf_expr_calls_hook_with(const gf_expr *expr, int hook, int nargs) {
  for (int pc = 0; expr->calls_hook && pc < expr->count; pc++)
    if (expr->ops[pc].code == OP_HOOK && expr->ops[pc].arg == hook && expr->ops[pc].nargs == nargs)
      return 1;
  return 0;
}
const char *gf_expr_text(const gf_expr *expr) {
  return expr->text;
}

gf_expr *gf_expr_copy(const gf_expr *expr) {
  if (!expr) return NULL;
  size_t size = sizeof *expr + (size_t)expr->count * sizeof expr->ops[0];
  gf_expr *copy = gf_malloc(size);
  char *text = gf_strdup(expr->text);
  if (!copy || !text) {
    free(copy);
    free(text);
    return NULL;
  }
  memcpy(copy, expr, size);
  copy->text = text;
  return copy;
}

void gf_expr_free(gf_expr *expr) {
  if (!expr) return;
  free(expr->text);
  free(expr);
}

/* ---- lexing -------------------------------------------------------------- */

typedef enum token_kind {
  T_END,
  T_NUMBER,
  T_BAD_NUMBER, /* reported as soon as the parser looks at it */
  T_HUGE_NUMBER,
  T_NAME,
  T_AND,
  T_OR,
  T_NOT,
  T_LPAREN,
  T_RPAREN,
  T_LBRACKET,
  T_RBRACKET,
  T_COMMA,
  T_PLUS,
  T_MINUS,
  T_STAR,
  T_SLASH,
  T_DSLASH,
  T_PERCENT,
  T_CARET,
  T_EQ,
  T_NE,
  T_LT,
  T_LE,
  T_GT,
  T_GE,
  T_OTHER, /* a character the language does not use */
} token_kind;

typedef struct token {
  token_kind kind;
  size_t offset, len;
  double value; /* T_NUMBER */
} token;

typedef struct parser {
  const char *text;
  size_t pos; /* where the next token starts looking */
  token tok;  /* the current token */
  const gf_scope *scope;
  gf_diag *diag;
  gf_loc loc;
  expr_op *ops;
  int count, cap;
  int depth;   /* stack depth after the ops emitted so far */
  int nesting; /* parser recursion */
} parser;

static int is_name_start(int c) {
  return isalpha(c) || c == '_';
}
static int is_name_char(int c) {
  return isalnum(c) || c == '_';
}
static int is_digit(int c) {
  return c >= '0' && c <= '9';
}

/* A number is digits[.digits][e[+-]digits] or .digits[...]. Anything that
 * runs on from it without a break (`1e`, `2x`, `1.2.3`) is one bad token so
 * the message quotes all of it. */
static void lex_number(parser *p, size_t start) {
  const char *s = p->text;
  size_t i = start;
  while (is_digit(s[i])) i++;
  if (s[i] == '.') {
    i++;
    while (is_digit(s[i])) i++;
  }
  if ((s[i] == 'e' || s[i] == 'E') &&
      (is_digit(s[i + 1]) || ((s[i + 1] == '+' || s[i + 1] == '-') && is_digit(s[i + 2])))) {
    i += 2;
    while (is_digit(s[i])) i++;
  }
  p->tok.kind = T_NUMBER;
  if (is_name_char((unsigned char)s[i]) || s[i] == '.') {
    p->tok.kind = T_BAD_NUMBER;
    while (is_name_char((unsigned char)s[i]) || s[i] == '.' ||
           ((s[i] == '+' || s[i] == '-') && (s[i - 1] == 'e' || s[i - 1] == 'E')))
      i++;
  }
  p->tok.len = i - start;
  if (p->tok.kind != T_NUMBER) return;
  char *end;
  errno = 0;
  p->tok.value = strtod(s + start, &end);
  /* strtod follows the locale; a ',' decimal point would stop it early. */
  if (end != s + i)
    p->tok.kind = T_BAD_NUMBER;
  else if (isinf(p->tok.value))
    p->tok.kind = T_HUGE_NUMBER;
}

static void next(parser *p) {
  const char *s = p->text;
  size_t i = p->pos;
  while (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') i++;
  token *t = &p->tok;
  t->offset = i;
  t->len = 1;
  t->value = 0;
  unsigned char c = (unsigned char)s[i];
  unsigned char c1 = c ? (unsigned char)s[i + 1] : 0;
  if (!c) {
    t->kind = T_END;
    t->len = 0;
  } else if (is_digit(c) || (c == '.' && is_digit(c1))) {
    lex_number(p, i);
  } else if (is_name_start(c)) {
    size_t j = i;
    while (is_name_char((unsigned char)s[j])) j++;
    t->len = j - i;
    t->kind = T_NAME;
    if (t->len == 3 && !memcmp(s + i, "and", 3)) t->kind = T_AND;
    if (t->len == 2 && !memcmp(s + i, "or", 2)) t->kind = T_OR;
    if (t->len == 3 && !memcmp(s + i, "not", 3)) t->kind = T_NOT;
  } else {
    static const char singles[] = "()[],+-*%^";
    static const token_kind single_kinds[] = {T_LPAREN, T_RPAREN, T_LBRACKET, T_RBRACKET, T_COMMA,
                                              T_PLUS,   T_MINUS,  T_STAR,     T_PERCENT,  T_CARET};
    const char *single = strchr(singles, c);
    switch (single ? 0 : c) {
      case 0:
        t->kind = single_kinds[single - singles];
        break;
      case '/':
        t->kind = c1 == '/' ? T_DSLASH : T_SLASH;
        t->len = c1 == '/' ? 2 : 1;
        break;
      case '<':
        t->kind = c1 == '=' ? T_LE : T_LT;
        t->len = c1 == '=' ? 2 : 1;
        break;
      case '>':
        t->kind = c1 == '=' ? T_GE : T_GT;
        t->len = c1 == '=' ? 2 : 1;
        break;
      case '=':
        t->kind = c1 == '=' ? T_EQ : T_OTHER;
        t->len = c1 == '=' ? 2 : 1;
        break;
      case '!':
        t->kind = c1 == '=' ? T_NE : T_OTHER;
        t->len = c1 == '=' ? 2 : 1;
        break;
      default:
        t->kind = T_OTHER;
        /* Quote a whole UTF-8 character, not half of one. */
        if (c >= 0xC0)
          while (((unsigned char)s[i + t->len] & 0xC0) == 0x80) t->len++;
        break;
    }
  }
  p->pos = i + t->len;
}

/* ---- diagnostics --------------------------------------------------------- */

__attribute__((format(printf, 3, 4))) static gf_status error_at(parser *p, size_t offset,
                                                                const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  gf_loc at = p->loc;
  at.col += (int)offset;
  gf_diag_verror(p->diag, at, GF_INVALID, fmt, ap);
  va_end(ap);
  return GF_INVALID;
}

/* A bad number is reported as such wherever the parser trips over it. */
static int lex_error(parser *p, gf_status *status) {
  const token *t = &p->tok;
  if (t->kind == T_BAD_NUMBER)
    *status = error_at(p, t->offset, "invalid number '%.*s'", (int)t->len, p->text + t->offset);
  else if (t->kind == T_HUGE_NUMBER)
    *status =
        error_at(p, t->offset, "number '%.*s' is too large", (int)t->len, p->text + t->offset);
  else
    return 0;
  return 1;
}

/* The current token cannot go here; `expected` says what could. */
static gf_status unexpected(parser *p, const char *expected) {
  gf_status status;
  if (lex_error(p, &status)) return status;
  const token *t = &p->tok;
  if (t->kind == T_END) return error_at(p, t->offset, "unexpected end of expression");
  return error_at(p, t->offset, "unexpected '%.*s'; %s", (int)t->len, p->text + t->offset,
                  expected);
}

/* Consumes a closing token or reports `message` ("expected ')'"). */
static gf_status expect(parser *p, token_kind kind, const char *message) {
  gf_status status;
  if (p->tok.kind == kind) {
    next(p);
    return GF_OK;
  }
  if (lex_error(p, &status)) return status;
  return error_at(p, p->tok.offset, "%s", message);
}

static gf_status enter(parser *p, size_t offset) {
  if (++p->nesting > EXPR_MAX_DEPTH) return error_at(p, offset, "expression is nested too deeply");
  return GF_OK;
}

/* ---- emitting ------------------------------------------------------------ */

/* Stack effect of one op, for the depth bound. */
static int stack_effect(const expr_op *op) {
  switch ((op_code)op->code) {
    case OP_CONST:
    case OP_STEP:
    case OP_VAR:
      return 1;
    case OP_HOOK:
      return 1 - op->nargs;
    case OP_NEG:
    case OP_NOT:
    case OP_BOOL:
    case OP_FLOOR:
    case OP_CEIL:
    case OP_ROUND:
    case OP_ABS:
    case OP_SQRT:
    case OP_EXP:
    case OP_LOG:
    case OP_SIN:
    case OP_COS:
    case OP_TAN:
      return 0;
    default:
      return -1; /* binary ops; the jumps pop when they fall through */
  }
}

/* `offset` is the token the op comes from, blamed when the stack overflows. */
static gf_status emit(parser *p, size_t offset, expr_op op) {
  p->depth += stack_effect(&op);
  if (p->depth > EXPR_MAX_DEPTH) return error_at(p, offset, "expression is nested too deeply");
  if (GF_GROW(p->ops, p->cap, p->count + 1) != GF_OK)
    return gf_oom(p->diag, "compiling an expression");
  p->ops[p->count++] = op;
  return GF_OK;
}

static gf_status emit_code(parser *p, size_t offset, op_code code) {
  return emit(p, offset, (expr_op){.code = (short)code});
}

static gf_status emit_const(parser *p, size_t offset, double value) {
  return emit(p, offset, (expr_op){.code = OP_CONST, .value = value});
}

static int is_dynamic(const expr_op *op) {
  return op->code == OP_STEP || op->code == OP_VAR || op->code == OP_HOOK;
}

/* Replaces the ops from `start` on, one finished sub-expression, by their
 * value when they use only constants. Sub-expressions fold as soon as they
 * are complete, so the range is short. */
static void fold(parser *p, int start) {
  if (p->count - start <= 1) return;
  for (int i = start; i < p->count; i++)
    if (is_dynamic(&p->ops[i])) return;
  const gf_eval_ctx none = {0};
  double value = run(p->ops + start, p->count - start, &none, NULL);
  p->ops[start] = (expr_op){.code = OP_CONST, .value = value};
  p->count = start + 1; /* the range pushed one value; depth is unchanged */
}

/* ---- parsing ------------------------------------------------------------- */

static gf_status parse_or(parser *p);

static const builtin *find_builtin(const char *name, size_t len) {
  for (size_t i = 0; i < sizeof builtins / sizeof builtins[0]; i++)
    if (strlen(builtins[i].name) == len && !memcmp(builtins[i].name, name, len))
      return &builtins[i];
  return NULL;
}

/* Arguments of a call, after the '('; stops after the ')'. min and max
 * combine each argument after the first with the ones before. */
static gf_status parse_args(parser *p, op_code combine, size_t name_offset, int *nargs) {
  gf_status status;
  *nargs = 0;
  if (p->tok.kind == T_RPAREN) {
    next(p);
    return GF_OK;
  }
  for (;;) {
    if ((status = parse_or(p))) return status;
    ++*nargs;
    if (combine != OP_CONST && *nargs > 1 && (status = emit_code(p, name_offset, combine)))
      return status;
    if (p->tok.kind == T_COMMA) {
      next(p);
      continue;
    }
    if (p->tok.kind == T_RPAREN) {
      next(p);
      return GF_OK;
    }
    gf_status lex_status;
    if (lex_error(p, &lex_status)) return lex_status;
    return error_at(p, p->tok.offset, "expected ',' or ')'");
  }
}

static gf_status parse_call(parser *p, const token *name, const gf_symbol *sym, const builtin *fn) {
  const char *text = p->text + name->offset;
  int len = (int)name->len;
  gf_status status;
  int start = p->count, nargs;
  if (!sym && !fn) return error_at(p, name->offset, "unknown function '%.*s'", len, text);
  if (sym && sym->kind != GF_SYM_HOOK)
    return error_at(p, name->offset, "'%.*s' is not a function", len, text);
  int chained = fn && fn->max_args == 0;
  if ((status = enter(p, p->tok.offset))) return status;
  next(p); /* ( */
  if ((status = parse_args(p, chained ? fn->code : OP_CONST, name->offset, &nargs))) return status;
  p->nesting--;
  if (sym) {
    if (nargs > EXPR_MAX_HOOK_ARGS)
      return error_at(p, name->offset, "hook '%.*s' takes at most %d arguments, got %d", len, text,
                      EXPR_MAX_HOOK_ARGS, nargs);
    /* A hook may return something new on each call: never folded. */
    return emit(p, name->offset,
                (expr_op){.code = OP_HOOK, .nargs = (short)nargs, .arg = sym->slot});
  }
  if (nargs < fn->min_args || (fn->max_args && nargs > fn->max_args)) {
    if (!fn->max_args)
      return error_at(p, name->offset, "function '%.*s' takes at least %d argument%s, got %d", len,
                      text, fn->min_args, fn->min_args == 1 ? "" : "s", nargs);
    return error_at(p, name->offset, "function '%.*s' takes %d argument%s, got %d", len, text,
                    fn->min_args, fn->min_args == 1 ? "" : "s", nargs);
  }
  if (!chained && (status = emit_code(p, name->offset, fn->code))) return status;
  fold(p, start);
  return GF_OK;
}

/* `name[index]`: the index must fold to a constant integer in range, so the
 * element is itself a constant. */
static gf_status parse_index(parser *p, const token *name, const gf_symbol *sym) {
  const char *text = p->text + name->offset;
  int len = (int)name->len;
  gf_status status;
  if (!sym || sym->kind != GF_SYM_ARRAY)
    return error_at(p, name->offset, "'%.*s' is not an array", len, text);
  if ((status = enter(p, p->tok.offset))) return status;
  next(p); /* [ */
  size_t index_offset = p->tok.offset;
  int start = p->count;
  if ((status = parse_or(p))) return status;
  if ((status = expect(p, T_RBRACKET, "expected ']'"))) return status;
  p->nesting--;
  if (p->count != start + 1 || p->ops[start].code != OP_CONST)
    return error_at(p, index_offset, "the index of '%.*s' must be a constant", len, text);
  double index = p->ops[start].value;
  if (!isfinite(index) || index != floor(index))
    return error_at(p, index_offset, "index %g of '%.*s' is not an integer", index, len, text);
  if (index < 0 || index >= sym->array_len) {
    if (sym->array_len <= 0)
      return error_at(p, index_offset, "index %g is out of range for '%.*s', which is empty", index,
                      len, text);
    return error_at(p, index_offset, "index %g is out of range for '%.*s' (0..%d)", index, len,
                    text, sym->array_len - 1);
  }
  p->ops[start].value = sym->array[(int)index];
  return GF_OK;
}

/* A name, a call or an indexed name. Names resolve in order: `n`, the
 * scope, the built-ins. */
static gf_status parse_name(parser *p) {
  const token name = p->tok;
  const char *text = p->text + name.offset;
  int len = (int)name.len;
  gf_symbol symbol = {0};
  const gf_symbol *sym = NULL;
  const builtin *fn = NULL;
  int is_pi = 0;
  if (len == 1 && text[0] == 'n') {
    symbol.kind = GF_SYM_STEP;
    sym = &symbol;
  } else if (p->scope && p->scope->lookup &&
             p->scope->lookup(p->scope->user, text, name.len, &symbol)) {
    sym = &symbol;
  } else if (len == 2 && !memcmp(text, "pi", 2)) {
    is_pi = 1;
  } else {
    fn = find_builtin(text, name.len);
  }
  if (sym && sym->kind == GF_SYM_STEP && !(p->scope && p->scope->allow_step))
    return error_at(p, name.offset, "'%.*s' (the step index) cannot be used here", len, text);
  next(p);
  if (p->tok.kind == T_LPAREN && is_pi)
    return error_at(p, name.offset, "'%.*s' is not a function", len, text);
  if (p->tok.kind == T_LPAREN) return parse_call(p, &name, sym, fn);
  if (!sym && !fn && !is_pi) return error_at(p, name.offset, "unknown name '%.*s'", len, text);
  if (p->tok.kind == T_LBRACKET) return parse_index(p, &name, sym);
  if (fn)
    return error_at(p, name.offset, "function '%.*s' must be called, as in %.*s(x)", len, text, len,
                    text);
  if (is_pi) return emit_const(p, name.offset, expr_pi);
  switch (sym->kind) {
    case GF_SYM_CONST:
      return emit_const(p, name.offset, sym->value);
    case GF_SYM_STEP:
      return emit_code(p, name.offset, OP_STEP);
    case GF_SYM_VAR:
      return emit(p, name.offset, (expr_op){.code = OP_VAR, .arg = sym->slot});
    case GF_SYM_ARRAY:
      return error_at(p, name.offset, "'%.*s' needs an index, as in %.*s[0]", len, text, len, text);
    case GF_SYM_HOOK:
      return error_at(p, name.offset, "hook '%.*s' must be called, as in %.*s(n)", len, text, len,
                      text);
  }
  return error_at(p, name.offset, "'%.*s' has an unknown kind", len, text);
}

static gf_status parse_primary(parser *p) {
  gf_status status;
  switch (p->tok.kind) {
    case T_NUMBER: {
      size_t offset = p->tok.offset;
      double value = p->tok.value;
      next(p);
      return emit_const(p, offset, value);
    }
    case T_NAME:
      return parse_name(p);
    case T_LPAREN:
      if ((status = enter(p, p->tok.offset))) return status;
      next(p);
      if ((status = parse_or(p))) return status;
      if ((status = expect(p, T_RPAREN, "expected ')'"))) return status;
      p->nesting--;
      return GF_OK;
    default:
      return unexpected(p, "expected a number, a name or '('");
  }
}

static gf_status parse_unary(parser *p);

/* primary ['^' unary]: right-associative, and 2^-1 works. */
static gf_status parse_power(parser *p) {
  gf_status status;
  int start = p->count;
  if ((status = parse_primary(p))) return status;
  if (p->tok.kind != T_CARET) return GF_OK;
  size_t offset = p->tok.offset;
  if ((status = enter(p, offset))) return status;
  next(p);
  if ((status = parse_unary(p))) return status;
  p->nesting--;
  if ((status = emit_code(p, offset, OP_POW))) return status;
  fold(p, start);
  return GF_OK;
}

/* '-' binds looser than '^', so -2^2 is -4. */
static gf_status parse_unary(parser *p) {
  gf_status status;
  if (p->tok.kind != T_MINUS) return parse_power(p);
  size_t offset = p->tok.offset;
  int start = p->count;
  if ((status = enter(p, offset))) return status;
  next(p);
  if ((status = parse_unary(p))) return status;
  p->nesting--;
  if ((status = emit_code(p, offset, OP_NEG))) return status;
  fold(p, start);
  return GF_OK;
}

static op_code binary_op(token_kind kind) {
  switch (kind) {
    case T_PLUS:
      return OP_ADD;
    case T_MINUS:
      return OP_SUB;
    case T_STAR:
      return OP_MUL;
    case T_SLASH:
      return OP_DIV;
    case T_DSLASH:
      return OP_IDIV;
    case T_PERCENT:
      return OP_MOD;
    case T_EQ:
      return OP_EQ;
    case T_NE:
      return OP_NE;
    case T_LT:
      return OP_LT;
    case T_LE:
      return OP_LE;
    case T_GT:
      return OP_GT;
    case T_GE:
      return OP_GE;
    default:
      return OP_CONST; /* not a binary operator */
  }
}

static int is_multiplicative(token_kind k) {
  return k == T_STAR || k == T_SLASH || k == T_DSLASH || k == T_PERCENT;
}
static int is_additive(token_kind k) {
  return k == T_PLUS || k == T_MINUS;
}
static int is_comparison(token_kind k) {
  return k == T_EQ || k == T_NE || k == T_LT || k == T_LE || k == T_GT || k == T_GE;
}

/* One left-associative level: operand (op operand)*. */
static gf_status parse_left(parser *p, gf_status (*operand)(parser *), int (*is_op)(token_kind)) {
  gf_status status;
  int start = p->count;
  if ((status = operand(p))) return status;
  while (is_op(p->tok.kind)) {
    size_t offset = p->tok.offset;
    op_code code = binary_op(p->tok.kind);
    next(p);
    if ((status = operand(p))) return status;
    if ((status = emit_code(p, offset, code))) return status;
    fold(p, start);
  }
  return GF_OK;
}

static gf_status parse_mul(parser *p) {
  return parse_left(p, parse_unary, is_multiplicative);
}
static gf_status parse_add(parser *p) {
  return parse_left(p, parse_mul, is_additive);
}

/* One comparison at most: `a < b < c` means different things in C and in
 * Python, so it is refused rather than guessed. */
static gf_status parse_comparison(parser *p) {
  gf_status status;
  int start = p->count;
  if ((status = parse_add(p))) return status;
  if (!is_comparison(p->tok.kind)) return GF_OK;
  size_t offset = p->tok.offset;
  op_code code = binary_op(p->tok.kind);
  next(p);
  if ((status = parse_add(p))) return status;
  if (is_comparison(p->tok.kind))
    return error_at(p, p->tok.offset,
                    "comparisons cannot be chained; join them with 'and', as in a < b and b < c");
  if ((status = emit_code(p, offset, code))) return status;
  fold(p, start);
  return GF_OK;
}

static gf_status parse_not(parser *p) {
  gf_status status;
  if (p->tok.kind != T_NOT) return parse_comparison(p);
  size_t offset = p->tok.offset;
  int start = p->count;
  if ((status = enter(p, offset))) return status;
  next(p);
  if ((status = parse_not(p))) return status;
  p->nesting--;
  if ((status = emit_code(p, offset, OP_NOT))) return status;
  fold(p, start);
  return GF_OK;
}

/* `a and b` / `a or b`: a, a jump over b when a decides, b, then b -> 1/0. */
static gf_status parse_logic(parser *p, gf_status (*operand)(parser *), token_kind kind,
                             op_code jump) {
  gf_status status;
  int start = p->count;
  if ((status = operand(p))) return status;
  while (p->tok.kind == kind) {
    size_t offset = p->tok.offset;
    next(p);
    int jump_at = p->count;
    if ((status = emit_code(p, offset, jump))) return status;
    if ((status = operand(p))) return status;
    if ((status = emit_code(p, offset, OP_BOOL))) return status;
    p->ops[jump_at].arg = p->count - jump_at - 1;
    fold(p, start);
  }
  return GF_OK;
}

static gf_status parse_and(parser *p) {
  return parse_logic(p, parse_not, T_AND, OP_AND_JUMP);
}
static gf_status parse_or(parser *p) {
  return parse_logic(p, parse_and, T_OR, OP_OR_JUMP);
}

/* ---- compiling ----------------------------------------------------------- */

gf_status gf_expr_compile(const char *text, const gf_scope *scope, gf_diag *diag, gf_loc loc,
                          gf_expr **out) {
  *out = NULL;
  if (!text) text = "";
  parser p = {.text = text, .scope = scope, .diag = diag, .loc = loc};
  gf_status status = GF_OK;
  next(&p);
  if (p.tok.kind == T_END) return error_at(&p, 0, "empty expression");
  if ((status = parse_or(&p))) goto fail;
  if (p.tok.kind != T_END) {
    status = unexpected(&p, "expected an operator or the end");
    goto fail;
  }
  gf_expr *expr = gf_malloc(sizeof *expr + (size_t)p.count * sizeof expr->ops[0]);
  char *copy = gf_strdup(text);
  if (!expr || !copy) {
    free(expr);
    free(copy);
    status = gf_oom(p.diag, "compiling an expression");
    goto fail;
  }
  expr->text = copy;
  expr->count = p.count;
  memcpy(expr->ops, p.ops, (size_t)p.count * sizeof expr->ops[0]);
  expr->is_constant = 1;
  expr->calls_hook = 0;
  for (int i = 0; i < p.count; i++) {
    if (is_dynamic(&p.ops[i])) expr->is_constant = 0;
    if (p.ops[i].code == OP_HOOK) expr->calls_hook = 1;
  }
  free(p.ops);
  *out = expr;
  return GF_OK;
fail:
  free(p.ops);
  return status;
}

const char *gf_number_text(double v, char *buf, size_t size) {
  if (isnan(v)) return "NaN";
  snprintf(buf, size, "%g", v);
  return buf;
}

int gf_is_index(double v, double count) {
  return v >= 0 && v < count && v == floor(v);
}
