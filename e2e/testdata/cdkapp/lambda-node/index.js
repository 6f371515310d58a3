// Greets a customer: the Node function of the CDK test app.
exports.handler = async (event, context) => {
  const name = (event && event.name) || "world";
  return { greeting: `Hello, ${name}!`, function: context ? context.functionName : undefined };
};
