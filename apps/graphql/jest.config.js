module.exports = {
  displayName: 'graphql',
  preset: '../../jest.preset.js',
  rootDir: __dirname,
};
