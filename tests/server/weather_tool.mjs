// The one tool every client script offers the gateway (the C++ tests' weather_tools), and the
// question that asks for it. Each SDK wraps it in its own tool shape.
export const weatherTool = {
  name: 'get_weather',
  description: 'Weather for a city',
  parameters: {
    type: 'object',
    properties: { city: { type: 'string' }, days: { type: 'integer' } },
    required: ['city'],
  },
};
export const question = 'Weather in Paris?';

// As a Chat Completions tool.
export const chatTools = [{ type: 'function', function: weatherTool }];
