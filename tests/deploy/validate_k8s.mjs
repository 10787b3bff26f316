// Validates Kubernetes objects against the API's own schemas, offline: kubernetes-models ships
// the OpenAPI definitions of every built-in kind compiled into ajv validators. Strict as well:
// a field the schema does not know (a typo such as `readinessProbes`) is an error too, which
// the API server would otherwise drop or refuse.
//
//   node validate_k8s.mjs objects.json   -> prints [{"kind", "name", "errors": [...]}, ...]
//
// objects.json: a JSON array of the rendered objects (k8s_test.py writes it from kustomize's
// output). Exits 1 when an object has no schema or does not validate.
import { readFileSync } from "node:fs";

// apiVersion "apps/v1", kind "Deployment" -> the module "IoK8sApiAppsV1Deployment".
function schemaModule(apiVersion, kind) {
  const [group, version] = apiVersion.includes("/") ? apiVersion.split("/") : ["core", apiVersion];
  const title = (word) => word.charAt(0).toUpperCase() + word.slice(1);
  const groupName = group.replace(/\.k8s\.io$/, "").split(".").map(title).join("");
  return `kubernetes-models/_schemas/IoK8sApi${groupName}${title(version)}${kind}`;
}

// The object, seen through proxies that note every field the validator reads: a schema reads
// each property it declares, and walks the keys of a map (labels, data) as a whole.
function watched(value, path, read) {
  if (value === null || typeof value !== "object") return value;
  return new Proxy(value, {
    get(target, key) {
      if (typeof key === "string") read.add(`${path}/${key}`);
      return watched(target[key], `${path}/${String(key)}`, read);
    },
    ownKeys(target) {
      read.add(`${path}/*`);
      return Reflect.ownKeys(target);
    },
  });
}

// Every field of `value` the validator never read: unknown to the schema (what is under one
// is not looked at).
function unread(value, path, read, out) {
  if (value === null || typeof value !== "object") return out;
  for (const key of Object.keys(value)) {
    const at = `${path}/${key}`;
    if (!Array.isArray(value) && !read.has(at) && !read.has(`${path}/*`)) out.push(at);
    else unread(value[key], at, read, out);
  }
  return out;
}

const objects = JSON.parse(readFileSync(process.argv[2], "utf8"));
const results = [];
let failed = false;
for (const object of objects) {
  const result = { kind: object.kind, name: object.metadata?.name ?? "", errors: [] };
  results.push(result);
  let validate;
  try {
    ({ validate } = await import(schemaModule(object.apiVersion ?? "", object.kind ?? "")));
  } catch {
    result.errors.push(`no schema for ${object.apiVersion} ${object.kind}`);
    failed = true;
    continue;
  }
  const read = new Set();
  if (!validate(watched(object, "", read)))
    for (const error of validate.errors)
      result.errors.push(`${error.instancePath || "/"}: ${error.message ?? error.keyword} ${JSON.stringify(error.params)}`);
  for (const field of unread(object, "", read, []))
    result.errors.push(`${field}: not a field of ${object.apiVersion} ${object.kind}`);
  if (result.errors.length > 0) failed = true;
}
console.log(JSON.stringify(results, null, 1));
process.exit(failed ? 1 : 0);
