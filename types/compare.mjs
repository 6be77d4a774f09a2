// Comparisons of types/index.d.ts with the Rust (run by types/check.mjs):
// - signatures: each exported function and Compactor member of the .d.ts wasm-bindgen
//   generates from the `unchecked_param_type` / `unchecked_return_type` attributes of
//   src/bindings/ (pkg/context_compaction.d.ts) against its declaration in index.d.ts:
//   parameter names, optionality, types and the return type. The generated signatures are
//   the erased form of the declared ones: a type parameter of index.d.ts (`M extends
//   MessageInput`) stands for its constraint (`unknown` without one).
// - shapes: the Rust field names of the plain-data types (target/ts-shapes.json, written by
//   `cargo test --test ts_shapes`) against the keys of the interfaces of the same name.
// - error codes: errorCodes() at run time against the `ErrorCode` union.
import ts from 'typescript';

const printer = ts.createPrinter({ removeComments: true, newLine: ts.NewLineKind.LineFeed });

/** A type node printed canonically: parsed again from its text, comments and layout dropped. */
function canonical(typeText) {
  const sf = ts.createSourceFile('t.ts', `type __T = ${typeText};`, ts.ScriptTarget.Latest, true);
  const alias = sf.statements[0];
  return printer.printNode(ts.EmitHint.Unspecified, alias.type, sf).replace(/\s+/g, ' ');
}

/** `node` printed with the type parameters in `subst` (name → stand-in text) replaced. */
function erased(node, sf, subst) {
  if (!node) return 'void';
  const cuts = [];
  const visit = (n) => {
    if (ts.isTypeReferenceNode(n) && ts.isIdentifier(n.typeName) && !n.typeArguments && subst.has(n.typeName.text)) {
      cuts.push([n.getStart(sf), n.getEnd(), subst.get(n.typeName.text)]);
      return;
    }
    ts.forEachChild(n, visit);
  };
  visit(node);
  const start = node.getStart(sf);
  let text = sf.text.slice(start, node.getEnd());
  for (const [from, to, stand] of cuts.reverse()) {
    const repl = /[|&]/.test(stand) ? `(${stand})` : stand;
    text = text.slice(0, from - start) + repl + text.slice(to - start);
  }
  return canonical(text);
}

function typeParams(decl, sf, outer = new Map()) {
  const subst = new Map(outer);
  // A constraint may name an earlier parameter: it is erased too.
  for (const tp of decl.typeParameters ?? []) {
    subst.set(tp.name.text, tp.constraint ? erased(tp.constraint, sf, subst) : 'unknown');
  }
  return subst;
}

function signature(decl, sf, subst) {
  const params = decl.parameters.map((p) => {
    const name = p.name.getText(sf);
    const optional = !!p.questionToken;
    return `${name}${optional ? '?' : ''}: ${erased(p.type, sf, subst)}`;
  });
  return { params, ret: ts.isConstructorDeclaration(decl) ? null : erased(decl.type, sf, subst) };
}

/** Functions and class members of a .d.ts: name → printed signature (or property type). */
function surface(file, text) {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const functions = new Map();
  const classes = new Map();
  for (const st of sf.statements) {
    if (ts.isFunctionDeclaration(st) && st.name) {
      functions.set(st.name.text, signature(st, sf, typeParams(st, sf)));
    } else if (ts.isClassDeclaration(st) && st.name) {
      const outer = typeParams(st, sf);
      const members = new Map();
      for (const m of st.members) {
        if (ts.isConstructorDeclaration(m)) members.set('constructor', signature(m, sf, typeParams(m, sf, outer)));
        // Overloads: the first one is compared (the general form; later ones are narrower
        // helps for inference, e.g. Compactor.restore's form for Message).
        else if (ts.isMethodDeclaration(m)) {
          if (!members.has(m.name.getText(sf))) members.set(m.name.getText(sf), signature(m, sf, typeParams(m, sf, outer)));
        }
        else if (ts.isPropertyDeclaration(m) || ts.isGetAccessorDeclaration(m)) {
          const readonly = ts.isGetAccessorDeclaration(m) || !!m.modifiers?.some((x) => x.kind === ts.SyntaxKind.ReadonlyKeyword);
          members.set(m.name.getText(sf), { property: `${readonly ? 'readonly ' : ''}${erased(m.type, sf, outer)}` });
        }
      }
      classes.set(st.name.text, members);
    }
  }
  return { functions, classes };
}

const show = (s) => (s.property !== undefined ? s.property : `(${s.params.join(', ')})${s.ret === null ? '' : `: ${s.ret}`}`);

/**
 * Differences between the generated signatures (`generated`, the text of
 * pkg/context_compaction.d.ts) and the declared ones (`declared`, index.d.ts), as messages.
 * `skip` names the generated functions/members that are wasm-bindgen's own.
 */
export function compareSignatures(generated, declared, skip) {
  const gen = surface('context_compaction.d.ts', generated);
  const dec = surface('index.d.ts', declared);
  const out = [];
  const diff = (what, g, d) => {
    if (show(g) === show(d)) return;
    const lines = [`${what}: the generated signature differs from index.d.ts`];
    if (g.params && d.params) {
      const n = Math.max(g.params.length, d.params.length);
      for (let i = 0; i < n; i++) {
        if (g.params[i] !== d.params[i]) {
          lines.push(`    parameter ${i + 1}: Rust ${g.params[i] ?? '(none)'}`);
          lines.push(`    ${' '.repeat(String(i + 1).length + 11)}index.d.ts ${d.params[i] ?? '(none)'}`);
        }
      }
      if (g.ret !== d.ret) {
        lines.push(`    returns: Rust ${g.ret}`);
        lines.push(`             index.d.ts ${d.ret}`);
      }
    } else {
      lines.push(`    Rust       ${show(g)}`, `    index.d.ts ${show(d)}`);
    }
    out.push(lines.join('\n'));
  };
  for (const [name, g] of gen.functions) {
    if (skip.has(name)) continue;
    const d = dec.functions.get(name);
    if (!d) out.push(`${name}: exported by the Rust but not declared as a function in index.d.ts`);
    else diff(name, g, d);
  }
  for (const [cls, members] of gen.classes) {
    const declaredMembers = dec.classes.get(cls);
    if (!declaredMembers) {
      out.push(`class ${cls}: exported by the Rust but not declared as a class in index.d.ts`);
      continue;
    }
    for (const [name, g] of members) {
      if (skip.has(`${cls}.${name}`)) continue;
      const d = declaredMembers.get(name);
      if (!d) out.push(`${cls}.${name}: exported by the Rust but not declared in index.d.ts`);
      else diff(`${cls}.${name}`, g, d);
    }
    for (const name of declaredMembers.keys()) {
      if (!members.has(name)) out.push(`${cls}.${name}: declared in index.d.ts but not exported by the Rust`);
    }
  }
  // Any `any` left in a generated signature means an export without its attributes.
  for (const [name, s] of [...gen.functions, ...[...gen.classes].flatMap(([c, m]) => [...m].map(([k, v]) => [`${c}.${k}`, v]))]) {
    if (!skip.has(name) && /\bany\b/.test(show(s))) out.push(`${name}: the generated signature still says \`any\` (add unchecked_param_type / unchecked_return_type): ${show(s)}`);
  }
  return out;
}

/** Keys of each interface named in `shapes`, compared with the Rust field names. */
export function compareShapes(program, indexFile, shapes) {
  const checker = program.getTypeChecker();
  const sf = program.getSourceFile(indexFile);
  const moduleSymbol = checker.getSymbolAtLocation(sf);
  const exports = new Map(checker.getExportsOfModule(moduleSymbol).map((s) => [s.name, s]));
  const out = [];
  // The TypeScript type of a sample value: its literal type for a primitive.
  const typeOf = (v) => {
    if (v === null) return checker.getNullType();
    if (v === true) return checker.getTrueType();
    if (v === false) return checker.getFalseType();
    if (typeof v === 'number') return checker.getNumberLiteralType(v);
    if (typeof v === 'string') return checker.getStringLiteralType(v);
    if (Array.isArray(v)) return checker.createArrayType(checker.getUnknownType());
    return checker.getNonPrimitiveType();
  };
  for (const [name, shape] of Object.entries(shapes)) {
    const { fields: rustFields, samples = {} } = shape;
    const symbol = exports.get(name);
    if (!symbol) {
      out.push(`${name}: a Rust shape with no interface of that name in index.d.ts`);
      continue;
    }
    const declared = checker.getDeclaredTypeOfSymbol(symbol);
    const tsKeys = checker.getPropertiesOfType(declared).map((p) => p.name);
    // What Rust writes must be assignable to the property's type: a number declared
    // `string`, or a `null` declared `?: number`, is a wrong declaration. Objects and arrays
    // are checked as such (their members have shapes of their own).
    for (const [field, value] of Object.entries(samples)) {
      const prop = checker.getPropertyOfType(declared, field);
      if (!prop) continue;
      const propType = checker.getTypeOfSymbol(prop);
      const members = propType.isUnion() ? propType.types : [propType];
      const accepts =
        value !== null && typeof value === 'object'
          ? members.some((t) => (t.flags & (ts.TypeFlags.Object | ts.TypeFlags.NonPrimitive | ts.TypeFlags.Unknown)) !== 0)
          : checker.isTypeAssignableTo(typeOf(value), propType);
      if (!accepts) {
        out.push(`${name}.${field}: Rust writes ${JSON.stringify(value)}, the interface declares ${checker.typeToString(propType)}`);
      }
    }
    const onlyRust = rustFields.filter((f) => !tsKeys.includes(f));
    const onlyTs = tsKeys.filter((k) => !rustFields.includes(k));
    if (onlyRust.length || onlyTs.length) {
      out.push(
        `${name}: the Rust fields and the interface's keys differ\n` +
          (onlyRust.length ? `    only in Rust:       ${onlyRust.join(', ')}\n` : '') +
          (onlyTs.length ? `    only in index.d.ts: ${onlyTs.join(', ')}\n` : ''),
      );
    }
  }
  return out;
}

/** The string literals of the union `name` in index.d.ts. */
export function unionLiterals(program, indexFile, name) {
  const checker = program.getTypeChecker();
  const moduleSymbol = checker.getSymbolAtLocation(program.getSourceFile(indexFile));
  const symbol = checker.getExportsOfModule(moduleSymbol).find((s) => s.name === name);
  if (!symbol) return null;
  const type = checker.getDeclaredTypeOfSymbol(symbol);
  return (type.isUnion() ? type.types : [type]).filter((t) => t.isStringLiteral()).map((t) => t.value);
}
